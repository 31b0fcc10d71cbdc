// What the kernel benchmarks (bench gemm, bench attention) share: the make-random-model shape
// whose layers they time, the timed passes and the threads.
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "common/thread_pool.h"
#include "model/random_model.h"

namespace vllm {

struct KernelBenchOptions {
  std::string shape = "tinyllama-1.1b";
  int repetitions = 3;
  int num_threads = 0;
};

inline void AddShapeOption(CLI::App& command, KernelBenchOptions& options) {
  command.add_option("--shape", options.shape, "a make-random-model shape")->capture_default_str();
}

// -r/--repetitions (`pass_help` says what one timed pass runs) and -t/--threads.
inline void AddPassOptions(CLI::App& command, KernelBenchOptions& options,
                           const std::string& pass_help) {
  command.add_option("-r,--repetitions", options.repetitions, pass_help)
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  command.add_option("-t,--threads", options.num_threads, "0: one per core")
      ->check(CLI::Range(0, ThreadPool::MaxThreads()));
}

// The shape named by --shape; nullptr after printing the error when there is none.
inline const ModelShape* FindShapeOrReport(const KernelBenchOptions& options) {
  const ModelShape* shape = FindModelShape(options.shape);
  if (shape == nullptr) std::cerr << "error: unknown shape '" << options.shape << "'\n";
  return shape;
}

}  // namespace vllm
