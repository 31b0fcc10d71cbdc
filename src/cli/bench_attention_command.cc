#include "cli/bench_attention_command.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cli/kernel_bench_options.h"
#include "cli/median_pass.h"
#include "cli/read_bandwidth.h"
#include "common/thread_pool.h"
#include "model/forward_batch.h"
#include "model/kv_cache_dtype.h"
#include "model/kv_storage.h"
#include "model/layers/paged_attention.h"
#include "model/random_model.h"

namespace vllm {
namespace {

struct BenchAttentionOptions : KernelBenchOptions {
  std::vector<int64_t> num_seqs = {1, 16, 200};
  int64_t context = 320;
  std::string kv_cache_dtype = "bfloat16";
};

constexpr int64_t kBlockSize = 16;

// A decode step's attention over every layer of `shape`: num_seqs sequences of `context` tokens
// each, random keys and values in blocks handed out in order (as a fresh cache does), and one new
// query token per sequence at the last position.
struct DecodeProblem {
  std::unique_ptr<KvStorage> kv;
  ForwardBatch batch;
  std::vector<float> q;  // [num_seqs, num_heads, head_dim]
};

Expected<DecodeProblem> MakeDecodeProblem(const ModelShape& shape, int64_t head_dim,
                                          kernels::KvCacheDtype dtype, int64_t num_seqs,
                                          int64_t context) {
  const int64_t blocks_per_seq = (context + kBlockSize - 1) / kBlockSize;
  auto kv = KvStorage::Create({.num_layers = shape.num_layers,
                               .num_blocks = num_seqs * blocks_per_seq,
                               .block_size = kBlockSize,
                               .num_kv_heads = shape.num_kv_heads,
                               .head_dim = head_dim,
                               .dtype = dtype});
  if (!kv) return Error{kv.error()};
  DecodeProblem problem{.kv = std::move(*kv)};
  // Keys and values drawn from a table of random rows (drawing every one would take longer than
  // the benchmark): [kTableRows, num_kv_heads, head_dim] each.
  constexpr int64_t kTableRows = 61;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  const int64_t row = shape.num_kv_heads * head_dim;
  std::vector<float> k(kTableRows * row), v(k.size());
  for (float& x : k) x = normal(rng);
  for (float& x : v) x = normal(rng);
  for (int64_t slot = 0; slot < problem.kv->num_slots(); ++slot) {
    for (int64_t layer = 0; layer < shape.num_layers; ++layer) {
      const int64_t k_row = (slot + layer) % kTableRows, v_row = (slot * 3 + layer) % kTableRows;
      problem.kv->Write(layer, slot, k.data() + k_row * row, v.data() + v_row * row);
    }
  }
  const int32_t token = 0;
  for (int64_t s = 0; s < num_seqs; ++s) {
    std::vector<std::vector<int32_t>> tables(1);
    for (int64_t b = 0; b < blocks_per_seq; ++b) {
      tables[0].push_back(static_cast<int32_t>(s * blocks_per_seq + b));
    }
    VLLM_RETURN_IF_ERROR(AppendSequence({&token, 1}, static_cast<int32_t>(context - 1), tables,
                                        kBlockSize, problem.batch));
  }
  VLLM_RETURN_IF_ERROR(ValidateForwardBatch(problem.batch, *problem.kv));
  problem.q.resize(num_seqs * shape.num_heads * head_dim);
  for (float& x : problem.q) x = normal(rng);
  return problem;
}

int Run(const BenchAttentionOptions& options) {
  const ModelShape* shape = FindShapeOrReport(options);
  if (shape == nullptr) return 1;
  auto dtype = ParseKvCacheDtype(options.kv_cache_dtype, kernels::KvCacheDtype::kBFloat16);
  if (!dtype) {
    std::cerr << "error: " << dtype.error() << "\n";
    return 1;
  }
  const int64_t head_dim = shape->resolved_head_dim();
  ThreadPool pool({.num_threads = options.num_threads});
  const double bandwidth = MeasureReadBandwidth(pool);
  std::printf(
      "%s: %lld layers, %lld query heads on %lld KV heads of %lld dims, %s KV, %d threads; "
      "read bandwidth %.1f GB/s\n\n",
      shape->name.c_str(), static_cast<long long>(shape->num_layers),
      static_cast<long long>(shape->num_heads), static_cast<long long>(shape->num_kv_heads),
      static_cast<long long>(head_dim), kernels::KvCacheDtypeName(*dtype), pool.num_threads(),
      bandwidth / 1e9);
  std::printf(
      "| sequences | context | ms / layer (median pass) | ms / step | KV GB/s | of bandwidth |\n"
      "|---|---|---|---|---|---|\n");
  const AttentionOptions attention{.scale = 1.0f / std::sqrt(static_cast<float>(head_dim))};
  for (int64_t num_seqs : options.num_seqs) {
    auto problem = MakeDecodeProblem(*shape, head_dim, *dtype, num_seqs, options.context);
    if (!problem) {
      std::cerr << "error: " << problem.error() << "\n";
      return 1;
    }
    std::vector<float> out(problem->q.size());
    // One pass runs every layer once, so that each layer's keys and values come from memory as
    // in a model's step.
    const double step_seconds = MedianPassSeconds(options.repetitions, [&] {
      for (int64_t layer = 0; layer < shape->num_layers; ++layer) {
        PagedAttention(problem->batch, layer, problem->q.data(), shape->num_heads, attention,
                       *problem->kv, pool, out.data());
      }
    });
    const double layer_seconds = step_seconds / shape->num_layers;
    // Keys and values of every position of every sequence, per layer.
    const double layer_bytes = 2.0 * num_seqs * options.context * shape->num_kv_heads * head_dim *
                               kernels::KvValueBytes(*dtype);
    std::printf("| %lld | %lld | %.3f | %.2f | %.1f | %.0f %% |\n",
                static_cast<long long>(num_seqs), static_cast<long long>(options.context),
                layer_seconds * 1e3, step_seconds * 1e3, layer_bytes / layer_seconds / 1e9,
                100.0 * layer_bytes / layer_seconds / bandwidth);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

void RegisterBenchAttentionCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchAttentionOptions>();
  CLI::App* command = bench.add_subcommand(
      "attention", "Decode attention over the paged KV cache beside the measured read bandwidth");
  AddShapeOption(*command, *options);
  command->add_option("--num-seqs", options->num_seqs, "sequences decoding together")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  command->add_option("--context", options->context, "tokens of each sequence")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  command
      ->add_option("--kv-cache-dtype", options->kv_cache_dtype,
                   "auto (bfloat16), bfloat16, float32, fp8, int8")
      ->capture_default_str();
  AddPassOptions(*command, *options, "timed passes over the layers");
  command->callback([options] { std::exit(Run(*options)); });
}

}  // namespace vllm
