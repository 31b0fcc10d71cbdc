#include "cli/bench_model_command.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <random>

#include "cli/loaded_model.h"
#include "cli/read_bandwidth.h"
#include "model/kv_cache_dtype.h"
#include "runner/model_runner.h"

namespace vllm {
namespace {

struct BenchModelOptions {
  std::string model_path;
  int prompt_tokens = 512;
  int generated_tokens = 128;
  int repetitions = 3;
  bool measure_bandwidth = true;
  int num_threads = 0;
  int block_size = 16;
  std::string kv_cache_dtype = "auto";
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `fn` once to warm up, then `repetitions` times; returns tokens/s mean and stddev.
template <typename Fn>
std::pair<double, double> Measure(int repetitions, int num_tokens, Fn fn) {
  fn();
  std::vector<double> rates;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    fn();
    rates.push_back(num_tokens / SecondsSince(start));
  }
  double mean = std::accumulate(rates.begin(), rates.end(), 0.0) / rates.size();
  double variance = 0.0;
  for (double rate : rates) variance += (rate - mean) * (rate - mean);
  return {mean, rates.size() > 1 ? std::sqrt(variance / (rates.size() - 1)) : 0.0};
}

int Run(const BenchModelOptions& options) {
  auto loaded = LoadPooledModel(options.model_path, options.num_threads);
  if (!loaded) {
    std::cerr << "error: " << loaded.error() << "\n";
    return 1;
  }
  Model& model = loaded->model();
  const int max_tokens = std::max(options.prompt_tokens, options.generated_tokens);
  const int num_blocks = (max_tokens + options.block_size - 1) / options.block_size;
  auto kv_cache_dtype =
      ParseKvCacheDtype(options.kv_cache_dtype, AutoKvCacheDtype(loaded->loaded, std::nullopt));
  if (!kv_cache_dtype) {
    std::cerr << "error: " << kv_cache_dtype.error() << "\n";
    return 1;
  }
  auto runner = ModelRunner::Create(model, {.num_kv_blocks = num_blocks,
                                            .block_size = options.block_size,
                                            .kv_cache_dtype = *kv_cache_dtype});
  if (!runner) {
    std::cerr << "error: " << runner.error() << "\n";
    return 1;
  }
  // One KV cache group of every layer (the runner's default layout): blocks 0, 1, 2, ...
  std::vector<std::vector<int32_t>> block_tables(1, std::vector<int32_t>(num_blocks));
  std::iota(block_tables[0].begin(), block_tables[0].end(), 0);
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> token(0, model.config().vocab_size - 1);
  std::vector<int32_t> random_tokens(max_tokens);
  for (auto& id : random_tokens) id = token(rng);
  const auto prompt = std::span<const int32_t>(random_tokens).first(options.prompt_tokens);

  bool failed = false;
  auto run_chunk = [&](std::span<const int32_t> ids, int32_t num_computed) {
    SequenceChunk chunk{ids, num_computed, block_tables, true};
    auto logits = (*runner)->ComputeLogits({&chunk, 1});
    if (!logits) {
      std::cerr << "error: " << logits.error() << "\n";
      failed = true;
    }
  };
  int64_t num_params = 0;
  int64_t num_weight_bytes = 0;
  if (loaded->loaded.gguf != nullptr) {
    for (const auto& tensor : loaded->loaded.gguf->tensors()) {
      num_params += tensor.num_elements();
      num_weight_bytes += tensor.num_bytes;
    }
  } else {
    num_params = loaded->loaded.checkpoint->source->num_values();
    for (const SafetensorsTensor* tensor : loaded->loaded.checkpoint->weights->tensors()) {
      num_weight_bytes += tensor->num_bytes;
    }
  }
  // Decode at batch 1 reads every linear weight once per token: its roofline is bandwidth/bytes.
  const double bandwidth = options.measure_bandwidth ? MeasureReadBandwidth(*loaded->pool) : 0.0;
  if (bandwidth > 0) {
    std::printf(
        "measured read bandwidth: %.1f GB/s on %d threads; weights read per token: "
        "%.3f GB; decode roofline: %.1f t/s\n\n",
        bandwidth / 1e9, loaded->pool->num_threads(), model.weight_bytes() / 1e9,
        bandwidth / model.weight_bytes());
  }
  std::printf(
      "| model | size | params | threads | test | t/s | of roofline |\n"
      "|---|---|---|---|---|---|---|\n");
  auto report = [&](const std::string& test, std::pair<double, double> rate, bool decode) {
    std::string ratio = "";
    if (decode && bandwidth > 0) {
      ratio = std::to_string(static_cast<int>(
                  std::lround(100.0 * rate.first * model.weight_bytes() / bandwidth))) +
              " %";
    }
    std::printf("| %s | %.2f GiB | %.2f B | %d | %s | %.2f ± %.2f | %s |\n",
                options.model_path.c_str(), num_weight_bytes / 1073741824.0, num_params / 1e9,
                loaded->pool->num_threads(), test.c_str(), rate.first, rate.second, ratio.c_str());
    std::fflush(stdout);
  };
  if (options.prompt_tokens > 0) {
    report("pp" + std::to_string(options.prompt_tokens),
           Measure(options.repetitions, options.prompt_tokens, [&] { run_chunk(prompt, 0); }),
           false);
  }
  if (options.generated_tokens > 0) {
    report("tg" + std::to_string(options.generated_tokens),
           Measure(options.repetitions, options.generated_tokens,
                   [&] {
                     for (int i = 0; i < options.generated_tokens; ++i) {
                       run_chunk(std::span<const int32_t>(random_tokens).subspan(i, 1), i);
                     }
                   }),
           true);
  }
  return failed ? 1 : 0;
}

}  // namespace

void RegisterBenchModelCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchModelOptions>();
  CLI::App* command = bench.add_subcommand(
      "model", "Prefill (pp) and decode (tg) speed at batch 1, as llama-bench");
  command->add_option("-m,--model", options->model_path, "GGUF model")->required();
  command->add_option("-p,--n-prompt", options->prompt_tokens)->capture_default_str();
  command->add_option("-n,--n-gen", options->generated_tokens)->capture_default_str();
  command->add_option("-r,--repetitions", options->repetitions)->capture_default_str();
  command->add_option("-t,--threads", options->num_threads, "0: one per core")
      ->check(CLI::Range(0, ThreadPool::MaxThreads()));
  command
      ->add_option("--kv-cache-dtype", options->kv_cache_dtype,
                   "auto|float32|bfloat16|fp8|fp8_e4m3|int8")
      ->capture_default_str();
  command->add_flag("!--no-bandwidth", options->measure_bandwidth,
                    "Skip measuring the read bandwidth (the decode roofline)");
  command->callback([options] { std::exit(Run(*options)); });
}

}  // namespace vllm
