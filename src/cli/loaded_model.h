// Opens a model (GGUF file or model directory) on a thread pool of its own, with a log line: what
// the CLI commands that run a bare model (bench-model) share.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "model/model_loader.h"

namespace vllm {

struct PooledModel {
  std::unique_ptr<ThreadPool> pool;
  LoadedModel loaded;  // runs on `pool`; declared after it, freed before it
  Model& model() const { return *loaded.model; }
};

// num_threads 0: one per core.
Expected<PooledModel> LoadPooledModel(const std::string& path, int num_threads);

}  // namespace vllm
