// vLLM's --override-attention-dtype ("Override dtype for attention"; vLLM honours it on ROCm and
// warns and ignores it elsewhere). Here attention reads keys and values in the KV cache's dtype:
// from a float32 cache every product is f32; from a bfloat16 one, where the CPU has AMX or
// AVX512-BF16, the query and softmax weights are rounded to bf16 for the products (sums in f32).
// So the override picks the KV cache dtype: float32 (float) and bfloat16 choose that cache in
// place of --kv-cache-dtype auto; float16 (half) has no f16 cache or kernels here and is ignored
// with a warning.
#pragma once

#include <string>

#include "common/expected.h"

namespace vllm {

// Applies `override_dtype` (EngineArgs::override_attention_dtype; empty: none) to
// `kv_cache_dtype` (--kv-cache-dtype's value). LLMEngine::Create runs it for every entry point
// (serve, Python's LLM / AsyncLLMEngine). Errors: an unknown dtype, and an explicit
// --kv-cache-dtype other than the override's (fp8, int8, or the other of float32 / bfloat16),
// which attention reads instead.
Status ApplyOverrideAttentionDtype(const std::string& override_dtype, std::string* kv_cache_dtype);

}  // namespace vllm
