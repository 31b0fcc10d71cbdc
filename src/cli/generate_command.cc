// Single-request generation: tokenize, prefill in chunks, decode token by token, stream the text.
#include "cli/generate_command.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <numeric>

#include "cli/loaded_model.h"
#include "common/logging.h"
#include "runner/model_runner.h"
#include "sampling/sampler.h"
#include "tokenizer/incremental_detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace vllm {
namespace {

struct GenerateOptions {
  std::string model_path;
  std::string prompt;
  int max_tokens = 16;  // vLLM's SamplingParams default
  SamplingOptions sampling;
  int64_t seed = -1;
  bool ignore_eos = false;
  int num_threads = 0;
  int max_model_len = 0;  // 0: the model's context length
  int block_size = 16;
  int max_num_batched_tokens = 2048;  // prefill chunk size
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int Run(GenerateOptions options) {
  if (options.seed >= 0) options.sampling.seed = static_cast<uint64_t>(options.seed);
  if (Status valid = options.sampling.Validate(); !valid.ok()) {
    std::cerr << "error: " << valid.message() << "\n";
    return 1;
  }
  if (options.max_tokens < 1) {
    std::cerr << "error: max_tokens must be at least 1, got " << options.max_tokens << ".\n";
    return 1;
  }
  auto loaded = LoadModel(options.model_path, options.num_threads);
  if (!loaded) {
    std::cerr << "error: " << loaded.error() << "\n";
    return 1;
  }
  auto tokenizer = LoadTokenizerFromGguf(*loaded->file);
  if (!tokenizer) {
    std::cerr << "error: " << tokenizer.error() << "\n";
    return 1;
  }
  Model& model = *loaded->model;
  const int64_t max_model_len =
      options.max_model_len > 0 ? options.max_model_len : model.config().max_position_embeddings;
  std::vector<int32_t> tokens = (*tokenizer)->Encode(options.prompt, /*add_special_tokens=*/true);
  const int64_t num_prompt_tokens = static_cast<int64_t>(tokens.size());
  if (num_prompt_tokens == 0) {
    std::cerr << "error: the prompt is empty\n";
    return 1;
  }
  if (num_prompt_tokens >= max_model_len) {
    std::cerr << "error: This model's maximum context length is " << max_model_len
              << " tokens. However, your request has " << num_prompt_tokens << " input tokens.\n";
    return 1;
  }
  const int64_t max_total =
      std::min<int64_t>(num_prompt_tokens + options.max_tokens, max_model_len);
  const int64_t num_blocks = (max_total + options.block_size - 1) / options.block_size;
  auto runner =
      ModelRunner::Create(model, {.num_kv_blocks = num_blocks, .block_size = options.block_size});
  if (!runner) {
    std::cerr << "error: " << runner.error() << "\n";
    return 1;
  }
  // One request owns the whole storage: its block table is simply 0, 1, 2, ...
  std::vector<int32_t> block_table(num_blocks);
  std::iota(block_table.begin(), block_table.end(), 0);
  Sampler sampler(options.sampling);
  IncrementalDetokenizer detokenizer(**tokenizer, tokens, /*skip_special_tokens=*/true);

  auto start = std::chrono::steady_clock::now();
  double prefill_seconds = 0.0;
  int64_t num_computed = 0;
  int64_t num_generated = 0;
  const int64_t vocab_size = model.config().vocab_size;
  while (true) {
    // Prefill in chunks of at most max_num_batched_tokens; then one token per step.
    const int64_t chunk_len = std::min<int64_t>(static_cast<int64_t>(tokens.size()) - num_computed,
                                                options.max_num_batched_tokens);
    const bool is_last_chunk = num_computed + chunk_len == static_cast<int64_t>(tokens.size());
    SequenceChunk chunk{std::span<const int32_t>(tokens).subspan(num_computed, chunk_len),
                        static_cast<int32_t>(num_computed), block_table, is_last_chunk};
    auto logits = (*runner)->Execute({&chunk, 1});
    if (!logits) {
      std::cerr << "error: " << logits.error() << "\n";
      return 1;
    }
    num_computed += chunk_len;
    if (!is_last_chunk) continue;
    if (num_generated == 0) prefill_seconds = SecondsSince(start);
    const int32_t next = sampler.Sample(logits->data(), vocab_size);
    tokens.push_back(next);
    ++num_generated;
    const bool is_eos = next == (*tokenizer)->eos_id() && !options.ignore_eos;
    if (!is_eos) std::cout << detokenizer.Step(next) << std::flush;
    if (is_eos || num_generated >= options.max_tokens ||
        static_cast<int64_t>(tokens.size()) >= max_model_len) {
      break;
    }
  }
  std::cout << detokenizer.Flush();
  if (::isatty(STDOUT_FILENO)) std::cout << '\n';  // only the text itself when piped
  std::cout << std::flush;
  const double total_seconds = SecondsSince(start);
  VLLM_LOG(kInfo) << num_prompt_tokens << " prompt tokens in " << prefill_seconds << " s ("
                  << num_prompt_tokens / prefill_seconds << " tok/s), " << num_generated
                  << " generated tokens at "
                  << (num_generated > 1 ? (num_generated - 1) / (total_seconds - prefill_seconds)
                                        : 0.0)
                  << " tok/s";
  return 0;
}

}  // namespace

void RegisterGenerateCommand(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand("generate", "Generate a completion for one prompt");
  command->add_option("-m,--model", options->model_path, "GGUF model file")->required();
  command->add_option("-p,--prompt", options->prompt, "Prompt text")->required();
  command->add_option("--max-tokens", options->max_tokens)->capture_default_str();
  command->add_option("--temperature", options->sampling.temperature, "0 means greedy")
      ->capture_default_str();
  command->add_option("--top-k", options->sampling.top_k, "0 or -1: all tokens")
      ->capture_default_str();
  command->add_option("--top-p", options->sampling.top_p)->capture_default_str();
  command->add_option("--min-p", options->sampling.min_p)->capture_default_str();
  command->add_option("--seed", options->seed, "Per-request random seed");
  command->add_flag("--ignore-eos", options->ignore_eos, "Keep generating after EOS");
  command->add_option("-t,--threads", options->num_threads, "Worker threads (0: one per core)");
  command->add_option("--max-model-len", options->max_model_len,
                      "Context length (default: the model's)");
  command->add_option("--block-size", options->block_size, "KV cache block size in tokens")
      ->capture_default_str();
  command
      ->add_option("--max-num-batched-tokens", options->max_num_batched_tokens,
                   "Prefill chunk size")
      ->capture_default_str();
  command->callback([options] { std::exit(Run(*options)); });
}

}  // namespace vllm
