// vLLM's --kv-cache-dtype: the flag's values, and what `auto` means for a loaded model.
#pragma once

#include <optional>
#include <string>

#include "common/expected.h"
#include "common/ggml_type.h"
#include "kernels/kv_cache_dtype.h"
#include "model/model_loader.h"

namespace vllm {

// auto → `auto_dtype`; float32; bfloat16; fp8 and fp8_e4m3 → e4m3fn; int8. Any other value is an
// error naming the valid ones.
Expected<kernels::KvCacheDtype> ParseKvCacheDtype(const std::string& name,
                                                  kernels::KvCacheDtype auto_dtype);

// What `auto` stores for `loaded` (vLLM: the model's activation dtype): float32 when its linear
// weights compute in f32, that is converted to F32 at load (`linear_type`, from --dtype) or, with
// no conversion, every tensor of two or more dimensions stored F32; bfloat16 otherwise (F16, BF16
// and quantized weights).
kernels::KvCacheDtype AutoKvCacheDtype(const LoadedModel& loaded,
                                       std::optional<GgmlType> linear_type);

}  // namespace vllm
