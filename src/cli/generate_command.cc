// `vllm-cpp generate`: one prompt streamed to stdout as it is generated, or a file of prompts run
// as one continuously batched job with one JSON line per prompt.
#include "cli/generate_command.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/human_readable_int.h"
#include "cli/lora_flags.h"
#include "cli/parallelism_flags.h"
#include "cli/speculative_config_flag.h"
#include "cli/tensor_parallel_launch.h"
#include "common/logging.h"
#include "engine/llm_engine.h"
#include "engine/task_flag.h"
#include "model/hf_overrides.h"
#include "model/model_loader.h"
#include "model/pooler_config_flag.h"
#include "server/openai/json.h"
#include "tokenizer/tokenizer_mode.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

struct GenerateOptions {
  EngineArgs engine;
  std::string prompt;
  std::string prompts_file;
  SamplingParams sampling;
  int64_t seed = -1;
  ValidatedSamplingParams validated_sampling;  // `sampling` once the options are checked
  std::vector<std::string> lora_modules;       // --lora-modules: at most one here
  std::optional<LoraRequest> lora_request;     // the adapter every prompt runs with
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Streams one request's text deltas to stdout.
int RunOne(const GenerateOptions& options) {
  auto engine = LLMEngine::Create(options.engine);
  if (!engine) {
    std::cerr << "error: " << engine.error() << "\n";
    return 1;
  }
  Status added = (*engine)->AddRequest(
      "0", options.prompt, options.validated_sampling.WithOutputKind(RequestOutputKind::kDelta),
      {.lora_request = options.lora_request});
  if (!added.ok()) {
    std::cerr << "error: " << added.message() << "\n";
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  double first_token_seconds = 0.0;
  int64_t num_generated = 0;
  while ((*engine)->HasUnfinishedRequests()) {
    auto outputs = (*engine)->Step();
    if (!outputs) {
      std::cerr << "error: " << outputs.error() << "\n";
      return 1;
    }
    for (const RequestOutput& output : *outputs) {
      const CompletionOutput& completion = output.outputs[0];
      if (num_generated == 0 && !completion.token_ids.empty()) {
        first_token_seconds = SecondsSince(start);
      }
      num_generated += static_cast<int64_t>(completion.token_ids.size());
      std::cout << completion.text << std::flush;
    }
  }
  if (::isatty(STDOUT_FILENO)) std::cout << '\n';  // only the text itself when piped
  std::cout << std::flush;
  const double total_seconds = SecondsSince(start);
  VLLM_LOG(kInfo) << "time to first token " << first_token_seconds << " s, " << num_generated
                  << " tokens, "
                  << (num_generated > 1
                          ? (num_generated - 1) / (total_seconds - first_token_seconds)
                          : 0.0)
                  << " tok/s after the first";
  if (options.engine.speculative_config) {
    VLLM_LOG(kInfo) << SpecDecodingSummary((*engine)->stats().spec_decoding);
  }
  return 0;
}

// Runs every line of the prompts file as one batch; prints {"index": i, "text": ...} per line.
int RunFile(const GenerateOptions& options) {
  std::ifstream in(options.prompts_file);
  if (!in) {
    std::cerr << "error: cannot read '" << options.prompts_file << "'\n";
    return 1;
  }
  std::vector<std::string> prompts;
  for (std::string line; std::getline(in, line);) prompts.push_back(line);
  try {
    LLM llm(options.engine);
    const bool use_tqdm = ::isatty(STDERR_FILENO);
    auto outputs = options.lora_request
                       ? llm.Generate(prompts, options.sampling, *options.lora_request, use_tqdm)
                       : llm.Generate(prompts, options.validated_sampling, use_tqdm);
    for (size_t i = 0; i < outputs.size(); ++i) {
      // Byte tokens that form no UTF-8 character (cut at max_tokens, or a random-weight model's)
      // print as U+FFFD instead of failing the dump.
      std::cout << server::DumpJson(
                       server::Json{{"index", i}, {"text", outputs[i].outputs[0].text}})
                << "\n";
    }
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

// --lora-modules: one adapter for every prompt (id 1), or none.
Status ReadGenerateLoraModule(GenerateOptions* options) {
  auto modules = ParseLoraModules(options->lora_modules);
  if (!modules) return Error{modules.error()};
  if (modules->empty()) return Status::Ok();
  if (modules->size() > 1) {
    return Error{"generate runs one adapter: give one --lora-modules item (serve takes several)"};
  }
  if (!options->engine.enable_lora) return Error{"--lora-modules needs --enable-lora"};
  const server::LoraModulePath& module = modules->front();
  options->lora_request = LoraRequest{.lora_name = module.name,
                                      .lora_int_id = 1,
                                      .lora_path = module.path,
                                      .base_model_name = module.base_model_name};
  return Status::Ok();
}

}  // namespace

std::unique_ptr<AsyncLLM> StartAsyncEngine(const EngineArgs& args) {
  try {
    return std::make_unique<AsyncLLM>(args);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return nullptr;
  }
}

std::string ReadChatTemplate(const std::string& flag, const std::string& model_template) {
  if (flag.empty()) return model_template;
  std::error_code error;
  if (std::filesystem::is_regular_file(flag, error)) {
    std::ifstream file(flag, std::ios::binary);
    std::stringstream contents;
    contents << file.rdbuf();
    return contents.str();
  }
  return flag;
}

void AddEngineOptions(CLI::App& command, EngineArgs& args) {
  AddParallelismOptions(command, args);
  command
      .add_option("model,-m,--model", args.model,
                  "GGUF model file, Hugging Face model directory, or model id (org/name, "
                  "org/name:Q4_K_M, org/name/file.gguf) from the Hugging Face cache or hub")
      ->required();
  // Model ids (hub room): where they are cached and which revision.
  command.add_option("--download-dir", args.download_dir,
                     "Hugging Face cache directory for model ids (default: HF_HUB_CACHE, "
                     "HF_HOME/hub or ~/.cache/huggingface/hub)");
  command.add_option("--revision", args.revision,
                     "Branch, tag or commit hash of a model id (default: main)");
  command.add_option("--tokenizer", args.tokenizer,
                     "Tokenizer directory, GGUF file whose vocabulary is used, or model id "
                     "(default: the model's)");
  command.add_option("--tokenizer-revision", args.tokenizer_revision,
                     "Revision of a --tokenizer id (default: --revision)");
  command.add_option("--hf-config-path", args.hf_config_path,
                     "Directory or model id whose config.json to use instead of the model "
                     "directory's (not for GGUF models)");
  command
      .add_option("--tokenizer-mode", args.tokenizer_mode,
                  "auto: tokenizer.json, else tekken.json, else tokenizer.model (SentencePiece); "
                  "slow: the same tokenizer as auto (one exact implementation per type); mistral: "
                  "tekken.json")
      ->capture_default_str()
      ->check([](const std::string& mode) {
        auto parsed = ParseTokenizerMode(mode);
        return parsed.ok() ? std::string() : parsed.error();
      });
  command.add_flag("--skip-tokenizer-init,!--no-skip-tokenizer-init", args.skip_tokenizer_init,
                   "Load no tokenizer: prompts must be token ids, outputs carry token ids and "
                   "empty text");
  command.add_flag("--enable-prompt-embeds,!--no-enable-prompt-embeds", args.enable_prompt_embeds,
                   "Accept prompts given as embeddings (the completions API's prompt_embeds)");
  // Bare, as vLLM's: the token of `huggingface-cli login`, which the default already reads.
  command
      .add_option("--hf-token", args.hf_token,
                  "Hugging Face token for gated or private ids (default, or given bare: "
                  "HF_TOKEN, then the token file of `huggingface-cli login`)")
      ->expected(0, 1);
  command.add_option("-t,--threads", args.num_threads, "Worker threads (0: one per core)");
  command.add_option("--dtype", args.dtype, "Linear weights: auto|float32|bfloat16|float16")
      ->capture_default_str();
  // vLLM's -q: refused as it is parsed, as vLLM's choices are, rather than once the model loads.
  command
      .add_option("-q,--quantization", args.quantization,
                  "q8_0|q6_k|q4_k: quantize the linear weights at load; or a quantized "
                  "checkpoint's method: awq|awq_marlin|gptq|gptq_marlin|fp8|compressed-tensors|"
                  "bitsandbytes (fp8 also quantizes an unquantized checkpoint at load)")
      ->check([](const std::string& value) {
        auto linear_type = LinearTypeFor("auto", value);
        return linear_type.ok() ? std::string() : linear_type.error();
      });
  command.add_option("--block-size", args.block_size, "KV cache block size in tokens")
      ->capture_default_str();
  command.add_option("--kv-cache-memory-bytes", args.kv_cache_memory_bytes,
                     "Bytes of KV cache storage (default: VLLM_CPU_KVCACHE_SPACE GiB, else "
                     "--gpu-memory-utilization's share, else 2 GiB)");
  command.add_option("--gpu-memory-utilization", args.gpu_memory_utilization,
                     "vLLM's GPU memory share, here the share of the RAM available at start (less "
                     "the weights) for the KV cache, unless --kv-cache-memory-bytes or "
                     "VLLM_CPU_KVCACHE_SPACE (GiB) is given; in (0, 1]");
  command
      .add_option("--kv-cache-dtype", args.kv_cache_dtype,
                  "KV cache storage: auto|float32|bfloat16|fp8|fp8_e4m3|int8 (auto: bfloat16, "
                  "or float32 for F32 weights)")
      ->capture_default_str();
  command.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching",
                   args.enable_prefix_caching, "Automatic prefix caching (on by default)");
  command.add_flag("--disable-hybrid-kv-cache-manager,!--no-disable-hybrid-kv-cache-manager",
                   args.disable_hybrid_kv_cache_manager,
                   "Keep every KV block of sliding-window layers (no freeing outside the window)");
  command.add_flag("--disable-sliding-window,!--no-disable-sliding-window",
                   args.disable_sliding_window,
                   "Cap the context (--max-model-len) to a sliding-window model's window, within "
                   "which every layer attends as a global one");
  command.add_option_function<std::string>(
      "--max-model-len",
      [&args](const std::string& text) {
        auto length = ParseHumanReadableInt(text);
        if (!length || *length < -1) {
          throw CLI::ValidationError("--max-model-len",
                                     length ? "must be -1 or more" : length.error());
        }
        args.max_model_len = *length == -1 ? 0 : *length;  // -1: the model's, as vLLM
      },
      "Context length, e.g. 4096, 32k (32000) or 32K (32768); -1 or unset: the model's (more "
      "only with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)");
  command
      .add_option("--max-logprobs", args.max_logprobs,
                  "Most logprobs and prompt_logprobs a request may ask for (-1: the vocabulary)")
      ->check(CLI::Range(-1, 1 << 30))
      ->capture_default_str();
  command.add_option("--max-num-seqs", args.max_num_seqs)->capture_default_str();
  command.add_option("--max-num-batched-tokens", args.max_num_batched_tokens)
      ->capture_default_str();
  command.add_option("--scheduling-policy", args.scheduling_policy, "fcfs|priority")
      ->capture_default_str();
  command
      .add_option("--runner", args.runner,
                  "auto|generate|pooling (auto: pooling for encoder-only models)")
      ->capture_default_str();
  command
      .add_option("--convert", args.convert,
                  "Pooling task family: auto|embed|classify (auto: classify with a "
                  "classification head)")
      ->capture_default_str();
  // Defined after --runner / --convert so that its callback runs last: a given --task replaces
  // them, as in vLLM.
  command.add_option_function<std::string>(
      "--task",
      [&args](const std::string& task) {
        if (Status applied = ApplyDeprecatedTask(task, &args); !applied.ok()) {
          throw CLI::ValidationError(applied.message());
        }
      },
      "Deprecated (vLLM 0.10): generate|transcription as --runner generate; "
      "embed|embedding|classify|score as --runner pooling --convert embed|classify|auto; auto");
  command
      .add_option("--generation-config", args.generation_config,
                  "Default sampling params: auto (the model directory's generation_config.json), "
                  "vllm (none: vLLM's defaults) or a directory holding generation_config.json")
      ->capture_default_str();
  command.add_option("--override-generation-config", args.override_generation_config,
                     "JSON object replacing default sampling params, e.g. '{\"temperature\": "
                     "0.5, \"max_new_tokens\": 256}' (keys: repetition_penalty, temperature, "
                     "top_k, top_p, min_p, max_new_tokens)");
  command
      .add_option("--logprobs-mode", args.logprobs_mode,
                  "What returned logprobs are computed from: raw_logprobs|raw_logits (the model's "
                  "logits) or processed_logprobs|processed_logits (after penalties, temperature "
                  "and top-k/top-p/min-p, as sampled)")
      ->check(
          CLI::IsMember({"raw_logprobs", "raw_logits", "processed_logprobs", "processed_logits"}))
      ->capture_default_str();
  command.add_option_function<std::string>(
      "--hf-overrides",
      [&args](const std::string& text) {
        auto overrides = ParseHfOverrides(text);
        if (!overrides) throw CLI::ValidationError(overrides.error());
        args.hf_overrides = text;
      },
      "JSON replacing config.json keys (a GGUF file: its metadata twins), e.g. "
      "'{\"rope_theta\": 1e6, \"max_position_embeddings\": 8192}' or '{\"architectures\": "
      "[\"Qwen3ForSequenceClassification\"], \"classifier_from_token\": [\"no\", \"yes\"], "
      "\"is_original_qwen3_reranker\": true}'");
  command.add_option_function<std::string>(
      "--pooler-config,--override-pooler-config",
      [&args](const std::string& text) {
        auto flag = ParsePoolerConfigFlag(text);
        if (!flag) throw CLI::ValidationError(flag.error());
        args.pooler_config = text;
      },
      "JSON replacing the model's pooling: pooling_type (CLS, MEAN, LAST, ALL) and the request "
      "defaults normalize, dimensions, activation, e.g. '{\"pooling_type\": \"MEAN\", "
      "\"normalize\": false}'");
  command.add_option_function<std::string>(
      "--rope-scaling",
      [&args](const std::string& text) {
        auto overrides = AddRopeOverrides(nlohmann::json::object(), text, std::nullopt);
        if (!overrides) throw CLI::ValidationError(overrides.error());
        args.rope_scaling = text;
      },
      "RoPE scaling as JSON, replacing config.json's rope_scaling, e.g. '{\"rope_type\": "
      "\"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 32768}'");
  command.add_option_function<double>(
      "--rope-theta",
      [&args](double theta) {
        auto overrides = AddRopeOverrides(nlohmann::json::object(), "", theta);
        if (!overrides) throw CLI::ValidationError(overrides.error());
        args.rope_theta = theta;
      },
      "RoPE base frequency, replacing config.json's rope_theta");
  command.add_option_function<std::string>(
      "--speculative-config",
      [&args](const std::string& text) {
        auto config = ParseSpeculativeConfig(text);
        if (!config) throw CLI::ValidationError(config.error());
        args.speculative_config = *config;
      },
      "Speculative decoding as JSON: n-gram prompt lookup, e.g. '{\"method\": \"ngram\", "
      "\"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4}', or a draft model of the same "
      "vocabulary, e.g. '{\"method\": \"draft_model\", \"model\": \"draft.gguf\", "
      "\"num_speculative_tokens\": 3}'");
  command
      .add_option("--structured-outputs-compile-threads", args.structured_outputs_compile_threads,
                  "Threads that compile structured-output constraints, off the engine loop")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  command
      .add_option("--structured-outputs-compile-timeout", args.structured_outputs_compile_timeout,
                  "Seconds of CPU time one structured-output constraint may take to compile "
                  "(0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      .add_option("--structured-outputs-max-bytes", args.structured_outputs_max_bytes,
                  "Largest structured-output constraint: the JSON schema, regex or grammar, or "
                  "the choices together, in bytes")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  AddLoraEngineOptions(command, args);
}

void RegisterGenerateCommand(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand("generate", "Generate completions");
  AddEngineOptions(*command, options->engine);
  auto* prompt = command->add_option("-p,--prompt", options->prompt, "Prompt text");
  auto* file = command->add_option("--prompts-file", options->prompts_file,
                                   "File of prompts, one per line, run as one batch");
  prompt->excludes(file);
  command->add_option("--max-tokens", options->sampling.max_tokens)->capture_default_str();
  command->add_option("--temperature", options->sampling.temperature, "0 means greedy")
      ->capture_default_str();
  command->add_option("--top-k", options->sampling.top_k, "0 or -1: all tokens")
      ->capture_default_str();
  command->add_option("--top-p", options->sampling.top_p)->capture_default_str();
  command->add_option("--min-p", options->sampling.min_p)->capture_default_str();
  command->add_option("--seed", options->seed, "Per-request random seed");
  command->add_flag("--ignore-eos", options->sampling.ignore_eos, "Keep generating after EOS");
  command->add_option("--lora-modules", options->lora_modules,
                      "One LoRA adapter every prompt runs with (with --enable-lora): name=path or "
                      "vLLM's JSON form");
  command->callback([options, prompt, file] {
    if (options->seed >= 0) options->sampling.seed = options->seed;
    auto validated = ValidatedSamplingParams::Validate(options->sampling);
    if (!validated) {
      std::cerr << "error: " << validated.error() << "\n";
      std::exit(1);
    }
    options->validated_sampling = std::move(*validated);
    if (Status lora = ReadGenerateLoraModule(options.get()); !lora.ok()) {
      std::cerr << "error: " << lora.message() << "\n";
      std::exit(1);
    }
    if (prompt->count() == 0 && file->count() == 0) {
      std::cerr << "error: give --prompt or --prompts-file\n";
      std::exit(1);
    }
    if (auto exit_code = RunTensorParallelRanks(&options->engine)) std::exit(*exit_code);
    std::exit(file->count() > 0 ? RunFile(*options) : RunOne(*options));
  });
}

}  // namespace vllm
