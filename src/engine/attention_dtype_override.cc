#include "engine/attention_dtype_override.h"

#include "common/logging.h"

namespace vllm {

Status ApplyOverrideAttentionDtype(const std::string& override_dtype, std::string* kv_cache_dtype) {
  if (override_dtype.empty()) return Status::Ok();
  const std::string shown = "--override-attention-dtype " + override_dtype;
  if (override_dtype == "float16" || override_dtype == "half") {
    VLLM_LOG(kWarning) << "vLLM's " << shown
                       << " is accepted and ignored: there is no float16 KV cache or attention "
                          "kernel; attention follows --kv-cache-dtype";
    return Status::Ok();
  }
  std::string cache_dtype;
  if (override_dtype == "float32" || override_dtype == "float") {
    cache_dtype = "float32";
  } else if (override_dtype == "bfloat16") {
    cache_dtype = "bfloat16";
  } else {
    return Error{"unsupported " + shown + " (supported: float32, bfloat16, float16)"};
  }
  if (*kv_cache_dtype != "auto" && *kv_cache_dtype != cache_dtype) {
    return Error{shown + " conflicts with --kv-cache-dtype " + *kv_cache_dtype +
                 ": attention reads keys and values in the KV cache's dtype; give one of the two"};
  }
  *kv_cache_dtype = cache_dtype;
  return Status::Ok();
}

}  // namespace vllm
