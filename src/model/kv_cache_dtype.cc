#include "model/kv_cache_dtype.h"

namespace vllm {

Expected<kernels::KvCacheDtype> ParseKvCacheDtype(const std::string& name,
                                                  kernels::KvCacheDtype auto_dtype) {
  using kernels::KvCacheDtype;
  if (name == "auto") return auto_dtype;
  if (name == "float32") return KvCacheDtype::kFloat32;
  if (name == "bfloat16") return KvCacheDtype::kBFloat16;
  if (name == "fp8" || name == "fp8_e4m3") return KvCacheDtype::kFp8E4m3;
  if (name == "int8") return KvCacheDtype::kInt8;
  return Error{"unsupported --kv-cache-dtype '" + name +
               "' (supported: auto, float32, bfloat16, fp8, fp8_e4m3, int8)"};
}

kernels::KvCacheDtype AutoKvCacheDtype(const LoadedModel& loaded,
                                       std::optional<GgmlType> linear_type) {
  bool f32_weights = true;
  if (linear_type) {
    f32_weights = *linear_type == GgmlType::kF32;
  } else if (loaded.gguf != nullptr) {
    for (const GgufTensor& tensor : loaded.gguf->tensors()) {
      f32_weights = f32_weights && (tensor.shape.size() < 2 || tensor.type == GgmlType::kF32);
    }
  } else if (loaded.checkpoint) {
    for (const SafetensorsTensor* tensor : loaded.checkpoint->weights->tensors()) {
      f32_weights = f32_weights && (tensor->shape.size() < 2 || tensor->type == GgmlType::kF32);
    }
  }
  return f32_weights ? kernels::KvCacheDtype::kFloat32 : kernels::KvCacheDtype::kBFloat16;
}

}  // namespace vllm
