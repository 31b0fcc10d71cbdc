#include "cli/vllm_serve_flags.h"

#include <algorithm>
#include <array>

#include "common/logging.h"

namespace vllm {
namespace {

constexpr auto kFlag = ServeFlagArity::kFlag;
constexpr auto kNegatable = ServeFlagArity::kNegatable;
constexpr auto kValue = ServeFlagArity::kValue;
constexpr auto kValues = ServeFlagArity::kValues;
constexpr auto kImplemented = ServeFlagUse::kImplemented;
constexpr auto kMapped = ServeFlagUse::kMapped;
constexpr auto kIgnored = ServeFlagUse::kIgnored;
constexpr auto kRefused = ServeFlagUse::kRefused;

constexpr std::string_view kNoParallel = "data parallelism is not implemented yet (issue 46)";
constexpr std::string_view kNoPython = "this build runs no Python code, so no Python class loads";
constexpr std::string_view kNoMultimodal = "no multimodal model runs in this build yet";
constexpr std::string_view kNoGpu = "a GPU setting: nothing to tune on CPU";
constexpr std::string_view kPoolerConfig =
    "pooling_type (CLS, MEAN, LAST, ALL), normalize, dimensions, activation; STEP pooling, "
    "chunked processing and logit_bias are refused";

// vLLM 0.10's `vllm serve --help` in its order, then the flags 0.11 added. Checked against vLLM's
// source (spellings, short forms, value or not): arg_utils.py's EngineArgs.add_cli_args of a
// 0.10.1-era and a 0.11.1-era release; a flag either takes as bool (0.10's BooleanOptionalAction,
// 0.11's deprecated --guided-decoding-* of type=bool) is kNegatable here, so --name=true works.
constexpr std::array kFlags = std::to_array<ServeFlag>({
    {"--headless", "", kFlag, kRefused, "false", kNoParallel},
    {"--api-server-count", "-asc", kValue, kRefused, "1",
     "one API server here; --api-worker-threads sets the threads that parse requests"},
    {"--config", "", kValue, kImplemented, "",
     "a YAML file of flags, read before the others, which override it"},
    {"--host", "", kValue, kImplemented, "", ""},
    {"--port", "", kValue, kImplemented, "", ""},
    {"--uvicorn-log-level", "", kValue, kMapped, "",
     "the log level (critical: error, trace: debug)"},
    {"--disable-uvicorn-access-log", "", kNegatable, kIgnored, "true",
     "this server writes no access log"},
    {"--allow-credentials", "", kNegatable, kImplemented, "", ""},
    {"--allowed-origins", "", kValue, kImplemented, "", ""},
    {"--allowed-methods", "", kValue, kImplemented, "", ""},
    {"--allowed-headers", "", kValue, kImplemented, "", ""},
    {"--api-key", "", kValue, kImplemented, "", "or the VLLM_API_KEY environment variable"},
    {"--lora-modules", "", kValues, kImplemented, "",
     "name=path or JSON {\"name\", \"path\", \"base_model_name\"}; each loaded at start (a bad "
     "one stops serve with the loader's message); a PEFT directory or a llama.cpp GGUF LoRA"},
    {"--chat-template", "", kValue, kImplemented, "", ""},
    {"--chat-template-content-format", "", kValue, kIgnored, "auto",
     "message content is rendered as the template expects it (auto)"},
    {"--response-role", "", kValue, kImplemented, "", "issue 43, the server part"},
    {"--ssl-keyfile", "", kValue, kImplemented, "", "issue 43, TLS"},
    {"--ssl-certfile", "", kValue, kImplemented, "", "issue 43, TLS"},
    {"--ssl-ca-certs", "", kValue, kImplemented, "", "issue 43, TLS"},
    {"--enable-ssl-refresh", "", kNegatable, kIgnored, "false",
     "certificates are read once, at start"},
    {"--ssl-cert-reqs", "", kValue, kImplemented, "", "issue 43, TLS"},
    {"--root-path", "", kValue, kImplemented, "", "issue 43, the server part"},
    {"--middleware", "", kValues, kRefused, "", kNoPython},
    {"--return-tokens-as-token-ids", "", kNegatable, kIgnored, "false",
     "a request asks for it with return_tokens_as_token_ids"},
    {"--disable-frontend-multiprocessing", "", kNegatable, kIgnored, "true|false",
     "the frontend is threads of the same process"},
    {"--enable-request-id-headers", "", kNegatable, kIgnored, "false",
     "responses carry no X-Request-Id header"},
    {"--enable-auto-tool-choice", "", kNegatable, kImplemented, "", ""},
    {"--tool-call-parser", "", kValue, kImplemented, "", ""},
    {"--tool-parser-plugin", "", kValue, kRefused, "", kNoPython},
    {"--log-config-file", "", kValue, kIgnored, "", "logs go to stderr; --log-level sets them"},
    {"--max-log-len", "", kValue, kImplemented, "", "issue 43, request logging"},
    {"--disable-fastapi-docs", "", kNegatable, kIgnored, "true|false",
     "there are no /docs or /redoc pages"},
    {"--enable-prompt-tokens-details", "", kNegatable, kIgnored, "false",
     "usage has no prompt_tokens_details"},
    {"--enable-server-load-tracking", "", kNegatable, kIgnored, "false",
     "no /load endpoint; /metrics has the running and waiting requests"},
    {"--enable-force-include-usage", "", kNegatable, kIgnored, "false",
     "a request asks for usage with stream_options"},
    {"--enable-tokenizer-info-endpoint", "", kNegatable, kIgnored, "false",
     "no /tokenizer_info endpoint"},
    {"--model", "-m", kValue, kImplemented, "", "or the positional model"},
    {"--task", "", kValue, kMapped, "",
     "deprecated, with a warning: generate as --runner generate; embed, classify and score as "
     "--runner pooling --convert embed / classify / auto; reward refused"},
    {"--tokenizer", "", kValue, kImplemented, "", "issue 43, model sources"},
    {"--tokenizer-mode", "", kValue, kImplemented, "",
     "auto (tokenizer.json, else tekken.json, else SentencePiece's tokenizer.model), slow "
     "(SentencePiece's tokenizer.model when there is one, else as auto), mistral (tekken.json); "
     "custom is refused"},
    {"--trust-remote-code", "", kNegatable, kIgnored, "false",
     "this build never runs a model's code"},
    {"--dtype", "", kValue, kImplemented, "", "the linear weights' type"},
    {"--seed", "", kValue, kMapped, "",
     "requests without a seed of their own take one drawn in order from a generator it seeds"},
    {"--hf-config-path", "", kValue, kImplemented, "",
     "a directory or id whose config.json a model directory is read with; refused for GGUF"},
    {"--allowed-local-media-path", "", kValue, kIgnored, "", kNoMultimodal},
    {"--revision", "", kValue, kImplemented, "", "issue 43, model sources"},
    {"--code-revision", "", kValue, kIgnored, "", "this build never runs a model's code"},
    {"--rope-scaling", "", kValue, kImplemented, "",
     "the rope_scaling override (linear, yarn, llama3, longrope; a GGUF file: linear, yarn)"},
    {"--rope-theta", "", kValue, kImplemented, "", "the rope_theta override"},
    {"--tokenizer-revision", "", kValue, kImplemented, "", "issue 43, model sources"},
    {"--max-model-len", "", kValue, kImplemented, "",
     "1k / 1K / -1 forms; above the model's context only with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"},
    {"--quantization", "-q", kValue, kImplemented, "", ""},
    {"--enforce-eager", "", kNegatable, kIgnored, "", "there are no CUDA graphs on CPU"},
    {"--max-seq-len-to-capture", "", kValue, kIgnored, "", "there are no CUDA graphs on CPU"},
    {"--max-logprobs", "", kValue, kImplemented, "", "-1: the vocabulary size"},
    {"--logprobs-mode", "", kValue, kImplemented, "",
     "raw_logprobs, raw_logits, processed_logprobs, processed_logits; raw is after a grammar's "
     "mask, as vLLM's"},
    {"--disable-sliding-window", "", kNegatable, kImplemented, "",
     "caps the context to the model's window; refused for windows that look both ways"},
    {"--disable-cascade-attn", "", kNegatable, kIgnored, "true|false",
     "there is no cascade attention on CPU"},
    {"--skip-tokenizer-init", "", kNegatable, kImplemented, "",
     "completions take token-id prompts and return token ids (return_token_ids) with empty text"},
    {"--enable-prompt-embeds", "", kNegatable, kImplemented, "",
     "/v1/completions takes prompt_embeds: base64 torch.save tensors (seq_len, hidden_size) of "
     "float32, bfloat16 or float16, in place of the token-embedding lookup (decoder models)"},
    {"--served-model-name", "", kValues, kImplemented, "", ""},
    {"--disable-async-output-proc", "", kFlag, kIgnored, "true",
     "outputs are processed on the engine thread"},
    {"--config-format", "", kValue, kRefused, "auto|hf",
     "config.json is read as Hugging Face's; mistral's params.json is not supported"},
    {"--hf-token", "", kValue, kImplemented, "", "issue 43, model sources"},
    {"--hf-overrides", "", kValue, kImplemented, "",
     "any config.json key; a GGUF file takes those with a metadata twin (docs/serve_flags.md)"},
    {"--override-neuron-config", "", kValue, kIgnored, "", "a Neuron setting"},
    {"--override-pooler-config", "", kValue, kImplemented, "", kPoolerConfig},
    {"--logits-processor-pattern", "", kValue, kRefused, "", kNoPython},
    {"--generation-config", "", kValue, kImplemented, "",
     "auto, vllm, or a directory holding generation_config.json"},
    {"--override-generation-config", "", kValue, kImplemented, "",
     "repetition_penalty, temperature, top_k, top_p, min_p, max_new_tokens"},
    {"--enable-sleep-mode", "", kNegatable, kIgnored, "false", "no /sleep endpoint"},
    {"--model-impl", "", kValue, kRefused, "auto|vllm",
     "the models are this build's own; transformers' cannot run here"},
    {"--override-attention-dtype", "", kValue, kMapped, "",
     "attention reads K and V in the KV cache's dtype: float32 / bfloat16 set --kv-cache-dtype "
     "(from auto; another explicit one is an error); float16 is ignored with a warning; "
     "Python's `LLM(..., override_attention_dtype=...)` the same"},
    {"--load-format", "", kValue, kRefused, "auto|gguf|safetensors",
     "GGUF and safetensors load; other formats are not supported"},
    {"--download-dir", "", kValue, kImplemented, "", "issue 43, model sources"},
    {"--model-loader-extra-config", "", kValue, kIgnored, "", "no loader takes extra settings"},
    {"--ignore-patterns", "", kValues, kIgnored, "", "no loader takes file patterns"},
    {"--use-tqdm-on-load", "", kNegatable, kIgnored, "true|false", "loading shows no bar"},
    {"--pt-load-map-location", "", kValue, kIgnored, "", "no PyTorch checkpoints load here"},
    {"--guided-decoding-backend", "", kValue, kMapped, "",
     "vLLM's backends are all this build's own grammar engine; other names refused"},
    {"--guided-decoding-disable-fallback", "", kNegatable, kImplemented, "",
     "as --structured-outputs-config's key, which it replaces (one backend: nothing to fall back "
     "to)"},
    {"--guided-decoding-disable-any-whitespace", "", kNegatable, kImplemented, "",
     "as --structured-outputs-config's key, which it replaces"},
    {"--guided-decoding-disable-additional-properties", "", kNegatable, kImplemented, "",
     "as --structured-outputs-config's key, which it replaces"},
    {"--reasoning-parser", "", kValue, kImplemented, "", ""},
    {"--distributed-executor-backend", "", kValue, kIgnored, "mp|uni",
     "the engine runs in this process"},
    {"--pipeline-parallel-size", "-pp", kValue, kImplemented, "",
     "stages are Open MPI processes, as -tp's ranks (README, Pipeline parallel); with -tp, "
     "tp x pp ranks"},
    {"--tensor-parallel-size", "-tp", kValue, kImplemented, "",
     "ranks are Open MPI processes: started on this host by the command, or by mpirun -H across "
     "hosts (README, Tensor parallel)"},
    {"--data-parallel-size", "-dp", kValue, kRefused, "1",
     "data parallelism is not implemented yet (issue 46)"},
    {"--data-parallel-rank", "-dpn", kValue, kRefused, "0", kNoParallel},
    {"--data-parallel-start-rank", "-dpr", kValue, kRefused, "0", kNoParallel},
    {"--data-parallel-size-local", "-dpl", kValue, kRefused, "1", kNoParallel},
    {"--data-parallel-address", "-dpa", kValue, kIgnored, "", kNoParallel},
    {"--data-parallel-rpc-port", "-dpp", kValue, kIgnored, "", kNoParallel},
    {"--data-parallel-backend", "-dpb", kValue, kIgnored, "", kNoParallel},
    {"--data-parallel-hybrid-lb", "", kNegatable, kIgnored, "false", kNoParallel},
    {"--enable-expert-parallel", "", kNegatable, kIgnored, "false", kNoParallel},
    {"--enable-eplb", "", kNegatable, kIgnored, "false", kNoParallel},
    {"--num-redundant-experts", "", kValue, kIgnored, "0", kNoParallel},
    {"--eplb-window-size", "", kValue, kIgnored, "", kNoParallel},
    {"--eplb-step-interval", "", kValue, kIgnored, "", kNoParallel},
    {"--eplb-log-balancedness", "", kNegatable, kIgnored, "false", kNoParallel},
    {"--max-parallel-loading-workers", "", kValue, kIgnored, "",
     "weights load with the engine's threads"},
    {"--ray-workers-use-nsight", "", kNegatable, kIgnored, "false", "there are no Ray workers"},
    {"--disable-custom-all-reduce", "", kNegatable, kIgnored, "", kNoGpu},
    {"--worker-cls", "", kValue, kRefused, "auto", kNoPython},
    {"--worker-extension-cls", "", kValue, kRefused, "", kNoPython},
    {"--enable-multimodal-encoder-data-parallel", "", kNegatable, kIgnored, "false", kNoMultimodal},
    {"--block-size", "", kValue, kImplemented, "", ""},
    {"--gpu-memory-utilization", "", kValue, kMapped, "",
     "that share of the RAM available at start, less the weights, for the KV cache, when "
     "--kv-cache-memory-bytes and VLLM_CPU_KVCACHE_SPACE are not given (every engine command, "
     "and Python's gpu_memory_utilization)"},
    {"--swap-space", "", kValue, kIgnored, "", "vLLM V1 does not swap; preemption recomputes"},
    {"--kv-cache-dtype", "", kValue, kImplemented, "", ""},
    {"--num-gpu-blocks-override", "", kValue, kIgnored, "",
     "the KV cache is sized by --kv-cache-memory-bytes"},
    {"--enable-prefix-caching", "", kNegatable, kImplemented, "", ""},
    {"--prefix-caching-hash-algo", "", kValue, kIgnored, "builtin",
     "block hashes are this build's own, with tokens compared on a hit"},
    {"--cpu-offload-gb", "", kValue, kIgnored, "0", "the weights are in RAM already"},
    {"--calculate-kv-scales", "", kNegatable, kIgnored, "false",
     "fp8 and int8 KV caches keep one scale per token and head"},
    {"--limit-mm-per-prompt", "", kValue, kIgnored, "", kNoMultimodal},
    {"--media-io-kwargs", "", kValue, kIgnored, "", kNoMultimodal},
    {"--mm-processor-kwargs", "", kValue, kIgnored, "", kNoMultimodal},
    {"--disable-mm-preprocessor-cache", "", kNegatable, kIgnored, "true|false", kNoMultimodal},
    {"--interleave-mm-strings", "", kNegatable, kIgnored, "false", kNoMultimodal},
    {"--enable-lora", "", kNegatable, kImplemented, "",
     "requests name an adapter in \"model\"; adapters of one step run batched by segment"},
    {"--enable-lora-bias", "", kNegatable, kRefused, "false",
     "adapters with lora bias are refused"},
    {"--max-loras", "", kValue, kImplemented, "", "distinct adapters in one step"},
    {"--max-lora-rank", "", kValue, kImplemented, "", "an adapter of a higher rank is refused"},
    {"--lora-extra-vocab-size", "", kValue, kIgnored, "",
     "deprecated in vLLM; adapters with extra vocabulary are refused"},
    {"--lora-dtype", "", kValue, kImplemented, "",
     "auto, float16, bfloat16 or float32, accepted: the adapter product runs in float32 here"},
    {"--max-cpu-loras", "", kValue, kImplemented, "",
     "adapters kept loaded, least recently used evicted (default: --max-loras)"},
    {"--fully-sharded-loras", "", kNegatable, kIgnored, "false", kNoParallel},
    {"--default-mm-loras", "", kValue, kIgnored, "", kNoMultimodal},
    {"--speculative-config", "", kValue, kImplemented, "", "methods ngram and draft_model"},
    {"--show-hidden-metrics-for-version", "", kValue, kIgnored, "",
     "/metrics exports every name it has"},
    {"--otlp-traces-endpoint", "", kValue, kIgnored, "", "no OpenTelemetry traces are sent"},
    {"--collect-detailed-traces", "", kValues, kIgnored, "", "no OpenTelemetry traces are sent"},
    {"--max-num-batched-tokens", "", kValue, kImplemented, "", ""},
    {"--max-num-seqs", "", kValue, kImplemented, "", ""},
    {"--max-num-partial-prefills", "", kValue, kIgnored, "1",
     "the scheduler budgets tokens, not partial prefills"},
    {"--max-long-partial-prefills", "", kValue, kIgnored, "1",
     "the scheduler budgets tokens, not partial prefills"},
    {"--cuda-graph-sizes", "", kValues, kIgnored, "", "there are no CUDA graphs on CPU"},
    {"--long-prefill-token-threshold", "", kValue, kIgnored, "0",
     "the scheduler budgets tokens, not partial prefills"},
    {"--num-lookahead-slots", "", kValue, kIgnored, "0", "a V0 setting"},
    {"--scheduler-delay-factor", "", kValue, kIgnored, "0", "a V0 setting"},
    {"--preemption-mode", "", kValue, kIgnored, "recompute", "preemption recomputes"},
    {"--num-scheduler-steps", "", kValue, kIgnored, "1", "a V0 setting"},
    {"--multi-step-stream-outputs", "", kNegatable, kIgnored, "true|false", "a V0 setting"},
    {"--scheduling-policy", "", kValue, kImplemented, "", ""},
    {"--enable-chunked-prefill", "", kNegatable, kIgnored, "true",
     "prefills are always chunked, by --max-num-batched-tokens"},
    {"--disable-chunked-mm-input", "", kNegatable, kIgnored, "false", kNoMultimodal},
    {"--scheduler-cls", "", kValue, kRefused, "", kNoPython},
    {"--disable-hybrid-kv-cache-manager", "", kNegatable, kImplemented, "", ""},
    {"--async-scheduling", "", kNegatable, kIgnored, "false",
     "a step is scheduled after the previous one"},
    {"--kv-transfer-config", "", kValue, kRefused, "",
     "disaggregated prefill is not available in this build"},
    {"--kv-events-config", "", kValue, kIgnored, "", "no KV cache events are published"},
    {"--compilation-config", "-O", kValue, kIgnored, "", "there is no torch.compile on CPU"},
    {"--additional-config", "", kValue, kIgnored, "", "a platform plugin's setting"},
    {"--disable-log-stats", "", kFlag, kMapped, "", "no periodic stats log line"},
    {"--enable-prompt-adapter", "", kFlag, kRefused, "false", "removed from vLLM"},
    {"--disable-log-requests", "", kNegatable, kImplemented, "", "issue 43, request logging"},
    // vLLM 0.11.
    {"--enable-log-requests", "", kNegatable, kImplemented, "", "issue 43, request logging"},
    {"--enable-log-outputs", "", kNegatable, kIgnored, "false", "request logs hold no outputs"},
    {"--uds", "", kValue, kImplemented, "",
     "serves on that UNIX domain socket instead of --host / --port (HTTPS too with --ssl-*); a "
     "stale socket file is replaced, a live one or a non-socket refused; removed at exit; a "
     "client leaving mid-stream aborts its request as over TCP"},
    {"--h11-max-incomplete-event-size", "", kValue, kIgnored, "",
     "--max-request-body-bytes bounds a request"},
    {"--h11-max-header-count", "", kValue, kIgnored, "",
     "--max-request-body-bytes bounds a request"},
    {"--log-error-stack", "", kNegatable, kIgnored, "false", "errors carry no stack"},
    {"--exclude-tools-when-tool-choice-none", "", kNegatable, kIgnored, "false",
     "tools stay in the prompt with tool_choice none"},
    {"--trust-request-chat-template", "", kNegatable, kImplemented, "", ""},
    {"--structured-outputs-config", "", kValue, kImplemented, "", ""},
    {"--runner", "", kValue, kImplemented, "", ""},
    {"--convert", "", kValue, kImplemented, "", ""},
    {"--kv-cache-memory-bytes", "", kValue, kImplemented, "", ""},
    {"--pooler-config", "", kValue, kImplemented, "", kPoolerConfig},
    {"--logits-processors", "", kValues, kRefused, "", kNoPython},
    {"--io-processor-plugin", "", kValue, kRefused, "", kNoPython},
    {"--decode-context-parallel-size", "-dcp", kValue, kRefused, "1", kNoParallel},
    {"--data-parallel-external-lb", "", kNegatable, kIgnored, "false", kNoParallel},
    {"--eplb-config", "", kValue, kIgnored, "", kNoParallel},
    {"--max-cudagraph-capture-size", "", kValue, kIgnored, "", "there are no CUDA graphs on CPU"},
    {"--cudagraph-capture-sizes", "", kValues, kIgnored, "", "there are no CUDA graphs on CPU"},
    {"--kv-sharing-fast-prefill", "", kNegatable, kIgnored, "false", kNoGpu},
    {"--mamba-cache-dtype", "", kValue, kIgnored, "auto", "no Mamba model runs in this build"},
    {"--mamba-ssm-cache-dtype", "", kValue, kIgnored, "auto", "no Mamba model runs in this build"},
    {"--mm-processor-cache-gb", "", kValue, kIgnored, "", kNoMultimodal},
    {"--mm-encoder-tp-mode", "", kValue, kIgnored, "", kNoMultimodal},
    {"--skip-mm-profiling", "", kNegatable, kIgnored, "true|false", kNoMultimodal},
    {"--safetensors-load-strategy", "", kValue, kIgnored, "", "safetensors are memory-mapped"},
    // Later 0.11.x releases.
    {"--allowed-media-domains", "", kValues, kIgnored, "", kNoMultimodal},
    {"--all2all-backend", "", kValue, kIgnored, "", kNoParallel},
    {"--enable-dbo", "", kNegatable, kIgnored, "false", kNoGpu},
    {"--dbo-decode-token-threshold", "", kValue, kIgnored, "", kNoGpu},
    {"--dbo-prefill-token-threshold", "", kValue, kIgnored, "", kNoGpu},
    {"--disable-nccl-for-dp-synchronization", "", kNegatable, kIgnored, "false", kNoParallel},
    {"--expert-placement-strategy", "", kValue, kIgnored, "", kNoParallel},
    {"--mamba-block-size", "", kValue, kIgnored, "", "no Mamba model runs in this build"},
    {"--enable-mm-embeds", "", kNegatable, kIgnored, "false", kNoMultimodal},
    {"--mm-processor-cache-type", "", kValue, kIgnored, "", kNoMultimodal},
    {"--mm-shm-cache-max-object-size-mb", "", kValue, kIgnored, "", kNoMultimodal},
    {"--mm-encoder-attn-backend", "", kValue, kIgnored, "", kNoMultimodal},
    {"--video-pruning-rate", "", kValue, kIgnored, "", kNoMultimodal},
    {"--aggregate-engine-logging", "", kFlag, kIgnored, "true",
     "one engine: its statistics are the aggregate"},
});

bool IsSameHere(std::string_view same_here, std::string_view value) {
  while (!same_here.empty()) {
    const size_t bar = same_here.find('|');
    if (same_here.substr(0, bar) == value) return true;
    if (bar == std::string_view::npos) break;
    same_here.remove_prefix(bar + 1);
  }
  return false;
}

std::string Join(const std::vector<std::string>& values) {
  std::string joined;
  for (const std::string& value : values) joined += (joined.empty() ? "" : " ") + value;
  return joined;
}

}  // namespace

std::span<const ServeFlag> VllmServeFlags() { return kFlags; }

std::shared_ptr<GivenServeFlags> RegisterVllmServeFlags(CLI::App& serve) {
  auto given = std::make_shared<GivenServeFlags>();
  for (const ServeFlag& flag : kFlags) {
    if (flag.use != kIgnored && flag.use != kRefused) continue;
    // Another part of the CLI may have made it a real option since this row was written.
    if (serve.get_option_no_throw(std::string(flag.name)) != nullptr) continue;
    const std::string name(flag.name);
    const std::string description = "vLLM's flag; " + std::string(flag.note);
    auto record = [given, key = flag.name](std::string value) {
      given->values[key] = std::move(value);
    };
    switch (flag.arity) {
      case kFlag:
        serve.add_flag_function(
            name, [record](int64_t) { record("true"); }, description);
        break;
      case kNegatable:
        serve.add_flag_function(
            name + ",!--no-" + name.substr(2),
            [record](int64_t count) { record(count > 0 ? "true" : "false"); }, description);
        break;
      case kValue:
        serve.add_option_function<std::string>(name, record, description)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // as argparse
        break;
      case kValues:
        serve.add_option_function<std::vector<std::string>>(
            name, [record](const std::vector<std::string>& values) { record(Join(values)); },
            description);
        break;
    }
  }
  return given;
}

Status CheckGivenFlags(const GivenServeFlags& given) {
  for (const ServeFlag& flag : kFlags) {
    auto value = given.values.find(flag.name);
    if (value == given.values.end() || IsSameHere(flag.same_here, value->second)) continue;
    const bool is_flag = flag.arity == kFlag || flag.arity == kNegatable;
    const std::string shown = !is_flag ? std::string(flag.name) + " " + value->second
                              : value->second == "false"
                                  ? "--no-" + std::string(flag.name.substr(2))
                                  : std::string(flag.name);
    if (flag.use == kRefused) return Error{shown + ": " + std::string(flag.note)};
    VLLM_LOG(kWarning) << "vLLM's " << shown << " is accepted and ignored: " << flag.note;
  }
  return Status::Ok();
}

std::vector<std::string> NormalizeVllmFlagSpellings(std::vector<std::string> args) {
  for (std::string& arg : args) {
    if (arg.size() > 2 && arg[0] == '-' && arg[1] == '-') {
      // vLLM's parser reads --max_model_len as --max-model-len; a value after '=' stays.
      const size_t end = std::min(arg.find('='), arg.size());
      std::replace(arg.begin() + 2, arg.begin() + static_cast<std::ptrdiff_t>(end), '_', '-');
      continue;
    }
    for (const ServeFlag& flag : kFlags) {
      const std::string_view short_name = flag.short_name;
      if (short_name.size() < 3 && short_name != "-O") continue;  // CLI11 reads -m and -q
      if (arg == short_name) {
        arg = std::string(flag.name);
      } else if (arg.starts_with(short_name) && arg.size() > short_name.size() &&
                 (arg[short_name.size()] == '=' || short_name == "-O")) {
        // -tp=2 keeps its '='; -O3 is --compilation-config=3.
        const size_t value_at = short_name.size() + (arg[short_name.size()] == '=' ? 1 : 0);
        arg = std::string(flag.name) + "=" + arg.substr(value_at);
      } else {
        continue;
      }
      break;
    }
  }
  return args;
}

std::string ServeFlagsMarkdownTable() {
  auto use_name = [](ServeFlagUse use) -> std::string {
    switch (use) {
      case kImplemented:
        return "implemented";
      case kMapped:
        return "mapped";
      case kIgnored:
        return "accepted, ignored with a warning";
      case kRefused:
        return "refused unless the default";
    }
    return "";
  };
  std::string table = "| flag | value | what this build does | note |\n|---|---|---|---|\n";
  for (const ServeFlag& flag : kFlags) {
    std::string names = "`" + std::string(flag.name) + "`";
    if (flag.arity == kNegatable) names += ", `--no-" + std::string(flag.name.substr(2)) + "`";
    if (!flag.short_name.empty()) names += ", `" + std::string(flag.short_name) + "`";
    const char* value = flag.arity == kValue    ? "one"
                        : flag.arity == kValues ? "one or more"
                                                : "none";
    std::string use = use_name(flag.use);
    if (!flag.same_here.empty() && (flag.use == kIgnored || flag.use == kRefused)) {
      std::string same(flag.same_here);
      std::replace(same.begin(), same.end(), '|', '/');
      use += flag.use == kIgnored ? " (silent for " + same + ")" : " (" + same + ")";
    }
    table += "| " + names + " | " + value + " | " + use + " | " + std::string(flag.note) + " |\n";
  }
  return table;
}

}  // namespace vllm
