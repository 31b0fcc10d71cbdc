// Engine options with vLLM's names (vllm/engine/arg_utils.py; flags in the comments).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace vllm {

// --speculative-config (vLLM's SpeculativeConfig, given as JSON): the keys left unset take
// vLLM's defaults when the engine starts. Methods "ngram" (prompt lookup) and "draft_model".
struct SpeculativeConfig {
  std::string method;  // "ngram" / "draft_model"; empty: from `model` ("ngram", else draft_model)
  std::string model;   // a draft model path (method "draft_model"), or "ngram"
  int num_speculative_tokens = 0;        // drafts per step: 1 to 64, fewer than max_model_len
  std::optional<int> prompt_lookup_max;  // default: prompt_lookup_min, else 5; at most 64
  std::optional<int> prompt_lookup_min;  // default: prompt_lookup_max, else 5
};

// `serve`'s --max-num-batched-tokens: under a closed loop of 16 or 32 clients on two cores, 256
// gives queued prompts their first token about a quarter sooner than 512 at the same output rate,
// and halves the decoders' stalls while a long prompt is prefilled (bench/HISTORY.md, 2026-11-25).
constexpr int64_t kServeMaxNumBatchedTokens = 256;

// The KV cache's bytes when no kv_cache_memory_bytes, VLLM_CPU_KVCACHE_SPACE or
// gpu_memory_utilization says otherwise.
constexpr int64_t kDefaultKvCacheMemoryBytes = int64_t{2} << 30;

struct EngineArgs {
  // A GGUF file, a Hugging Face model directory, or a model id (org/name, org/name:QUANT_TAG,
  // org/name/file.gguf) looked up in the Hugging Face cache and downloaded when absent.
  std::string model;
  // Where ids are found and fetched (vLLM's names): --download-dir (the cache directory; empty:
  // HF_HUB_CACHE, HF_HOME/hub or ~/.cache/huggingface/hub), --revision (branch, tag or commit;
  // empty: main), --hf-token (empty: HF_TOKEN or the login token file).
  std::string download_dir;
  std::string revision;
  std::string hf_token;
  // --tokenizer: a tokenizer directory, a GGUF file whose vocabulary is used, or an id as for
  // `model` (only its tokenizer files fetched); empty: the model's. --tokenizer-revision: its
  // revision (empty: `revision`).
  std::string tokenizer;
  std::string tokenizer_revision;
  // --hf-config-path: a directory, or an id as for `model` (at `revision`, only its config and
  // tokenizer files fetched), whose config.json replaces a model directory's own; empty: the
  // model's. Refused for a GGUF model, which its metadata describes.
  std::string hf_config_path;
  // --tokenizer-mode auto|slow|mistral: which tokenizer file of a directory loads (mistral:
  // tekken.json; auto takes it when there is no tokenizer.json; slow loads what auto does).
  std::string tokenizer_mode = "auto";
  // --skip-tokenizer-init: load no tokenizer; prompts must be token ids and outputs carry token
  // ids with empty text (vLLM's detokenize=False).
  bool skip_tokenizer_init = false;
  // --enable-prompt-embeds: completions may carry prompt_embeds (RequestOptions::prompt_embeds).
  bool enable_prompt_embeds = false;
  // -t/--threads: worker threads, 0 (one per CPU) or 1 to ThreadPool::MaxThreads() (a few per
  // CPU); anything else is refused.
  int num_threads = 0;
  // -tp/--tensor-parallel-size: the ranks (MPI processes) one model is split across, 1 to 64.
  // Above 1 the process must be rank 0 or a worker of an MPI job of that many ranks, which the
  // CLI starts (README, "Tensor parallel").
  int tensor_parallel_size = 1;
  // -pp/--pipeline-parallel-size: the stages (MPI ranks) one model's layers are split across, 1
  // to 64 (README, "Pipeline parallel"); with tensor_parallel_size, tp × pp ranks in all (64 at
  // most), each stage split across tp of them.
  int pipeline_parallel_size = 1;
  // --dtype auto|float32|bfloat16|float16: the linear weights' type (auto: as stored).
  std::string dtype = "auto";
  // -q/--quantization q8_0 / q6_k / q4_k: quantize the linear weights at load (empty: none); or
  // vLLM's method of a quantized Hugging Face checkpoint (awq, awq_marlin, gptq, gptq_marlin, fp8,
  // compressed-tensors, bitsandbytes), which must match its quantization_config; fp8 also
  // quantizes an unquantized checkpoint at load.
  std::string quantization;
  int block_size = 16;  // --block-size
  // --kv-cache-memory-bytes: the KV cache's bytes. Unset (vLLM's None): VLLM_CPU_KVCACHE_SPACE
  // GiB when the environment sets it, else gpu_memory_utilization's share, else
  // kDefaultKvCacheMemoryBytes (src/engine/kv_cache_memory.h).
  std::optional<int64_t> kv_cache_memory_bytes;
  // --gpu-memory-utilization, in (0, 1]: vLLM's share of GPU memory, here the share of the memory
  // available before the model loads, less its weights, that the KV cache takes when neither of
  // the above is given. Unset: not used (vLLM's 0.9 would take most of the RAM).
  std::optional<double> gpu_memory_utilization;
  // --kv-cache-dtype auto|float32|bfloat16|fp8|fp8_e4m3|int8: what K and V are stored as (fp8 is
  // e4m3fn; fp8 and int8 with one scale per token and KV head). auto: the model's activation
  // dtype, float32 for F32 weights and bfloat16 for any other (F16, BF16, quantized).
  std::string kv_cache_dtype = "auto";
  // --override-attention-dtype: float32 or bfloat16 picks the KV cache dtype attention reads
  // (with kv_cache_dtype auto); float16 is accepted and ignored with a warning. Empty: none.
  std::string override_attention_dtype;
  bool enable_prefix_caching = true;  // --[no-]enable-prefix-caching
  int64_t max_model_len = 0;          // --max-model-len (0: the model's)
  int max_num_seqs = 256;             // --max-num-seqs
  // --max-num-batched-tokens: the tokens one step computes. 512 on two CPU cores keeps a step
  // near 2.5 s while the GEMMs stay at full speed (bench/RESULTS.md, chunked prefill): running
  // decodes keep their pace while long prompts arrive, and queued prompts get their first token
  // sooner than in 2048-token steps. `serve` takes kServeMaxNumBatchedTokens instead, as vLLM
  // picks a smaller budget for its API server than for offline runs.
  int64_t max_num_batched_tokens = 512;
  std::string scheduling_policy = "fcfs";  // --scheduling-policy fcfs|priority
  // --disable-hybrid-kv-cache-manager: one KV cache group of every layer, so a sliding-window
  // layer keeps every block of a sequence as a full-attention one does (no window freeing).
  bool disable_hybrid_kv_cache_manager = false;
  // --disable-sliding-window: vLLM's cap of the context to a sliding-window model's window
  // (max_model_len, by default and at most), within which every layer attends as a global one.
  bool disable_sliding_window = false;
  std::optional<SpeculativeConfig> speculative_config;  // --speculative-config JSON
  // vLLM's max_logprobs: the most logprobs (and prompt_logprobs) a request may ask for per
  // position; -1: no limit (a request's -1, the whole vocabulary, is then allowed).
  int max_logprobs = 20;
  // --seed: vLLM's global seed. A request without a seed of its own takes the next one drawn from
  // a generator it seeds, so a run's sampled outputs repeat; unset: such requests stay unseeded.
  std::optional<int64_t> seed;
  // --runner auto|generate|pooling: what the model serves (auto: pooling for encoder-only
  // models, generate otherwise).
  std::string runner = "auto";
  // --convert auto|embed|classify: the pooling task family of a pooling runner (auto: classify
  // when the model has a classification head, else embed).
  std::string convert = "auto";
  // --hf-overrides: a JSON object whose keys replace config.json's (empty: none), e.g.
  // {"rope_theta": 1e6} or Qwen3-Reranker as Qwen3ForSequenceClassification; a GGUF file takes
  // the keys with a metadata twin.
  std::string hf_overrides;
  // --pooler-config (or --override-pooler-config): a JSON object replacing the model's pooling
  // type and the normalize / dimensions / use_activation defaults of requests (empty: none).
  std::string pooler_config;
  // --generation-config auto|vllm|DIR: where the default sampling params come from (auto: the
  // model directory's generation_config.json; vllm: none, SamplingParams' own; DIR: that
  // directory's, its EOS ids too). --override-generation-config: a JSON object whose
  // repetition_penalty, temperature, top_k, top_p, min_p and max_new_tokens replace those
  // defaults (empty: none).
  std::string generation_config = "auto";
  std::string override_generation_config;
  // --logprobs-mode: what a sampled token's logprobs are computed from. raw_logprobs /
  // raw_logits: the model's logits before any processing; processed_logprobs /
  // processed_logits: after the logits processors, the grammar's mask, the temperature and the
  // top-k / top-p / min-p filters (filtered tokens -inf), as the sampler draws from them.
  std::string logprobs_mode = "raw_logprobs";
  // --rope-scaling (a JSON object; empty: the model's) and --rope-theta: vLLM's shorthands for
  // the rope_scaling and rope_theta overrides, which they replace.
  std::string rope_scaling;
  std::optional<double> rope_theta;
  // Structured-output constraints (JSON schema, regex, choice, grammar) compile on threads of
  // their own, off the engine loop, within these limits; one over a limit is refused with an
  // error naming its flag. A cached constraint needs no compile.
  int structured_outputs_compile_threads = 2;        // --structured-outputs-compile-threads
  double structured_outputs_compile_timeout = 10.0;  // --structured-outputs-compile-timeout (s)
  // --structured-outputs-max-bytes: the schema, regex or grammar text, or the choices together.
  int64_t structured_outputs_max_bytes = 4 << 20;
  // LoRA adapters (vLLM's LoRAConfig): --enable-lora; at most max_loras distinct adapters in one
  // step (--max-loras), each of rank <= max_lora_rank (--max-lora-rank), with up to
  // max_cpu_loras loaded adapters kept in memory, least recently used evicted (--max-cpu-loras;
  // unset: max_loras). --lora-dtype: auto|float16|bfloat16|float32, how adapters are stored (auto:
  // f32 for an f32 base, else bf16; float16 is stored as bf16); the product runs in f32.
  bool enable_lora = false;
  int max_loras = 1;
  int max_lora_rank = 16;
  std::optional<int> max_cpu_loras;
  std::string lora_dtype = "auto";
};

}  // namespace vllm
