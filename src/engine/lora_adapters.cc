#include "engine/lora_adapters.h"

#include <algorithm>
#include <array>

#include "common/logging.h"
#include "model/kv_cache_dtype.h"
#include "model/lora_base_shape_of.h"

namespace vllm {

Status CheckLoraArgs(const EngineArgs& args) {
  if (!args.enable_lora) return Status::Ok();
  static constexpr std::array<int, 9> kPossibleMaxRanks = {1, 8, 16, 32, 64, 128, 256, 320, 512};
  if (std::find(kPossibleMaxRanks.begin(), kPossibleMaxRanks.end(), args.max_lora_rank) ==
      kPossibleMaxRanks.end()) {
    return Error{"max_lora_rank (" + std::to_string(args.max_lora_rank) +
                 ") must be one of (1, 8, 16, 32, 64, 128, 256, 320, 512)."};
  }
  if (args.max_loras < 1) {
    return Error{"max_loras (" + std::to_string(args.max_loras) + ") must be >= 1."};
  }
  const int max_cpu_loras = args.max_cpu_loras.value_or(args.max_loras);
  if (max_cpu_loras < args.max_loras) {
    return Error{"max_cpu_loras (" + std::to_string(max_cpu_loras) + ") must be >= max_loras (" +
                 std::to_string(args.max_loras) + ")"};
  }
  const std::string& dtype = args.lora_dtype;
  if (dtype != "auto" && dtype != "float16" && dtype != "bfloat16" && dtype != "float32") {
    return Error{"--lora-dtype must be auto, float16, bfloat16 or float32, not '" + dtype + "'"};
  }
  return Status::Ok();
}

lora::LoraDtype LoraDtypeFor(const EngineArgs& args, const LoadedModel& model) {
  if (args.lora_dtype == "float32") return lora::LoraDtype::kFloat32;
  if (args.lora_dtype == "auto") {
    auto linear_type = LinearTypeFor(args.dtype, args.quantization);
    const bool f32_model =
        AutoKvCacheDtype(model, linear_type ? *linear_type : std::optional<GgmlType>()) ==
        kernels::KvCacheDtype::kFloat32;
    return f32_model ? lora::LoraDtype::kFloat32 : lora::LoraDtype::kBfloat16;
  }
  if (args.lora_dtype == "float16") {
    VLLM_LOG(kInfo) << "--lora-dtype float16: LoRA adapters are stored as bfloat16 (same size)";
  }
  return lora::LoraDtype::kBfloat16;
}

std::string LoraNotEnabledMessage(const LoraRequest& request) {
  return "Got lora_request LoRARequest(lora_name='" + request.lora_name +
         "', lora_int_id=" + std::to_string(request.lora_int_id) + ", lora_path='" +
         request.lora_path + "') but LoRA is not enabled!";
}

Expected<std::unique_ptr<LoraAdapters>> LoraAdapters::Create(const EngineArgs& args,
                                                             const LoadedModel& model) {
  auto cache = lora::LoraCache::Create(
      {.max_cpu_loras = args.max_cpu_loras.value_or(args.max_loras),
       .base = LoraBaseShapeOf(model.model->config(), !model.is_directory()),
       .load = {.max_lora_rank = args.max_lora_rank, .dtype = LoraDtypeFor(args, model)}});
  if (!cache) return Error{cache.error()};
  return std::unique_ptr<LoraAdapters>(new LoraAdapters(std::move(*cache)));
}

Expected<std::shared_ptr<const lora::LoraWeights>> ResolveLoraRequest(
    LoraAdapters* adapters, const std::optional<LoraRequest>& request) {
  if (!request) return std::shared_ptr<const lora::LoraWeights>();
  if (adapters == nullptr) return Error{LoraNotEnabledMessage(*request)};
  return adapters->Resolve(*request);
}

}  // namespace vllm
