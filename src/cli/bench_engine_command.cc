// Offline engine benchmarks as `vllm bench throughput` / `vllm bench latency` define them:
// random token-id prompts, ignore_eos so every request produces exactly output_len tokens.
#include "cli/bench_engine_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <numeric>
#include <random>

#include "cli/generate_command.h"
#include "cli/speculative_config_flag.h"
#include "cli/tensor_parallel_launch.h"
#include "engine/llm_engine.h"
#include "model/model_config.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

struct BenchEngineOptions {
  EngineArgs engine;
  int input_len = 128;
  int output_len = 128;
  int num_prompts = 64;  // throughput
  int batch_size = 8;    // latency
  int num_iters_warmup = 1;
  int num_iters = 3;
  uint64_t seed = 0;
  // Structured output (vLLM's benchmark_serving_structured_output): this fraction of the
  // requests is constrained to the JSON Schema in json_schema_path and ends where it completes.
  double structured_output_ratio = 0.0;
  std::string json_schema_path;
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::vector<int32_t>> RandomPrompts(int count, int length, int64_t vocab_size,
                                                uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Skip the first ids, which hold the special and byte tokens of most vocabularies.
  const int64_t first = std::min<int64_t>(vocab_size - 1, 1000);
  std::uniform_int_distribution<int64_t> token(first, vocab_size - 1);
  std::vector<std::vector<int32_t>> prompts(count, std::vector<int32_t>(length));
  for (auto& prompt : prompts) {
    for (auto& id : prompt) id = static_cast<int32_t>(token(rng));
  }
  return prompts;
}

SamplingParams FixedLength(int output_len) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.top_p = 1.0f;
  params.ignore_eos = true;
  params.max_tokens = output_len;
  return params;
}

// The params of each prompt: every request FixedLength, the first ratio * count constrained.
Expected<std::vector<SamplingParams>> ParamsPerPrompt(const BenchEngineOptions& options,
                                                      int count) {
  std::vector<SamplingParams> params(count, FixedLength(options.output_len));
  if (options.structured_output_ratio <= 0.0) return params;
  std::ifstream file(options.json_schema_path);
  if (!file) return Error{"--json-schema: cannot read '" + options.json_schema_path + "'"};
  const std::string schema((std::istreambuf_iterator<char>(file)), {});
  const int num_constrained = static_cast<int>(options.structured_output_ratio * count + 0.5);
  for (int i = 0; i < std::min(num_constrained, count); ++i) {
    params[i].ignore_eos = false;
    params[i].structured_outputs = StructuredOutputsParams{.json = schema};
  }
  return params;
}

// The KV memory the run needed (the most blocks its requests held at once, times a block's
// bytes) and, with speculative decoding, its drafts' acceptance.
void PrintKvAndSpecDecodingSummary(LLM& llm, const EngineArgs& args) {
  const EngineStats stats = llm.engine().stats();
  std::printf(
      "Peak KV cache in use: %lld blocks of %lld KiB, %.1f MiB\n",
      static_cast<long long>(stats.peak_kv_blocks_in_use),
      static_cast<long long>(stats.kv_bytes_per_block >> 10),
      static_cast<double>(stats.peak_kv_blocks_in_use * stats.kv_bytes_per_block) / (1 << 20));
  if (args.speculative_config) {
    std::printf("%s\n", SpecDecodingSummary(stats.spec_decoding).c_str());
  }
}

int RunThroughput(const BenchEngineOptions& options) {
  try {
    LLM llm(options.engine);
    auto prompts = RandomPrompts(options.num_prompts, options.input_len,
                                 llm.engine().model_config().vocab_size, options.seed);
    auto params = ParamsPerPrompt(options, options.num_prompts);
    if (!params) throw std::invalid_argument(params.error());
    const auto start = std::chrono::steady_clock::now();
    auto outputs = llm.GenerateFromTokenIds(prompts, *params, /*use_tqdm=*/false);
    const double seconds = SecondsSince(start);
    int64_t prompt_tokens = 0, output_tokens = 0;
    for (const auto& output : outputs) {
      prompt_tokens += static_cast<int64_t>(output.prompt_token_ids.size());
      output_tokens += static_cast<int64_t>(output.outputs[0].token_ids.size());
    }
    std::printf("Throughput: %.2f requests/s, %.2f total tokens/s, %.2f output tokens/s\n",
                options.num_prompts / seconds, (prompt_tokens + output_tokens) / seconds,
                output_tokens / seconds);
    std::printf("Total num prompt tokens:  %lld\nTotal num output tokens:  %lld\n",
                static_cast<long long>(prompt_tokens), static_cast<long long>(output_tokens));
    std::printf("Elapsed: %.2f s, preemptions: %lld\n", seconds,
                static_cast<long long>(llm.engine().stats().num_preemptions));
    PrintKvAndSpecDecodingSummary(llm, options.engine);
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

int RunLatency(const BenchEngineOptions& options) {
  try {
    LLM llm(options.engine);
    auto prompts = RandomPrompts(options.batch_size, options.input_len,
                                 llm.engine().model_config().vocab_size, options.seed);
    const SamplingParams params = FixedLength(options.output_len);
    for (int i = 0; i < options.num_iters_warmup; ++i)
      llm.GenerateFromTokenIds(prompts, params, false);
    std::vector<double> latencies;
    for (int i = 0; i < options.num_iters; ++i) {
      const auto start = std::chrono::steady_clock::now();
      llm.GenerateFromTokenIds(prompts, params, false);
      latencies.push_back(SecondsSince(start));
    }
    std::sort(latencies.begin(), latencies.end());
    auto percentile = [&latencies](double p) {
      return latencies[static_cast<size_t>(p / 100.0 * (latencies.size() - 1) + 0.5)];
    };
    std::printf("Avg latency: %.4f seconds\n",
                std::accumulate(latencies.begin(), latencies.end(), 0.0) / latencies.size());
    for (int p : {10, 25, 50, 75, 90, 99}) {
      std::printf("%d%% percentile latency: %.4f seconds\n", p, percentile(p));
    }
    PrintKvAndSpecDecodingSummary(llm, options.engine);
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void RegisterBenchEngineCommands(CLI::App& bench) {
  auto options = std::make_shared<BenchEngineOptions>();
  CLI::App* throughput = bench.add_subcommand("throughput", "Offline throughput, as vLLM's");
  AddEngineOptions(*throughput, options->engine);
  throughput->add_option("--input-len", options->input_len)->capture_default_str();
  throughput->add_option("--output-len", options->output_len)->capture_default_str();
  throughput->add_option("--num-prompts", options->num_prompts)->capture_default_str();
  throughput->add_option("--seed", options->seed)->capture_default_str();
  throughput
      ->add_option("--structured-output-ratio", options->structured_output_ratio,
                   "Fraction of the requests constrained to --json-schema")
      ->capture_default_str();
  throughput->add_option("--json-schema", options->json_schema_path,
                         "JSON Schema file for the constrained requests");
  throughput->callback([options] {
    if (auto exit_code = RunTensorParallelRanks(&options->engine)) std::exit(*exit_code);
    std::exit(RunThroughput(*options));
  });

  CLI::App* latency = bench.add_subcommand("latency", "Latency of one batch, as vLLM's");
  AddEngineOptions(*latency, options->engine);
  latency->add_option("--input-len", options->input_len)->capture_default_str();
  latency->add_option("--output-len", options->output_len)->capture_default_str();
  latency->add_option("--batch-size", options->batch_size)->capture_default_str();
  latency->add_option("--num-iters-warmup", options->num_iters_warmup)->capture_default_str();
  latency->add_option("--num-iters", options->num_iters)->capture_default_str();
  latency->add_option("--seed", options->seed)->capture_default_str();
  latency->callback([options] {
    if (auto exit_code = RunTensorParallelRanks(&options->engine)) std::exit(*exit_code);
    std::exit(RunLatency(*options));
  });
}

}  // namespace vllm
