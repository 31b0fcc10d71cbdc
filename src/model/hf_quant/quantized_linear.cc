#include "model/hf_quant/quantized_linear.h"

#include <set>
#include <string_view>

#include "model/hf_quant/linear_parts.h"

namespace vllm {
namespace {

// The tensor suffixes (after "<module>.") each method stores for a quantized layer; any other
// tensor of the module (a bias) stays a normal tensor. output_scale (k_proj / v_proj's scale for
// an FP8 KV cache) is consumed unused: the KV cache is not quantized from it, as in vLLM without
// --kv-cache-dtype fp8.
bool IsPartSuffix(QuantMethod method, std::string_view suffix) {
  static const std::set<std::string_view> kGptqAwq = {"qweight", "qzeros", "scales", "g_idx"};
  static const std::set<std::string_view> kFp8 = {"weight", "weight_scale", "weight_scale_inv",
                                                  "input_scale", "output_scale"};
  static const std::set<std::string_view> kCompressedTensors = {
      "weight",       "weight_packed", "weight_scale",     "weight_zero_point", "weight_shape",
      "weight_g_idx", "input_scale",   "input_zero_point", "output_scale"};
  switch (method) {
    case QuantMethod::kGptq:
    case QuantMethod::kAwq:
      return kGptqAwq.contains(suffix);
    case QuantMethod::kFp8:
      return kFp8.contains(suffix);
    case QuantMethod::kCompressedTensors:
      return kCompressedTensors.contains(suffix);
    case QuantMethod::kBitsAndBytes:  // 4-bit: weight.absmax, weight.quant_state.*, ...
      return suffix == "weight" || suffix.starts_with("weight.") || suffix == "SCB" ||
             suffix == "weight_format";
    case QuantMethod::kNone:
      break;
  }
  return false;
}

// A linear layer that fp8's quantize_at_load converts: attention and MLP projections ("*_proj")
// and Mixtral-style experts' w1 / w2 / w3; not embeddings, the head, norms or MoE routers.
bool IsProjectionModule(std::string_view module) {
  const size_t dot = module.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? module : module.substr(dot + 1);
  return last.ends_with("_proj") || last == "w1" || last == "w2" || last == "w3";
}

// Whether `tensor` (named "<module>.weight", or by its anchor suffix for GPTQ / AWQ /
// compressed-tensors' weight_packed) marks `module` as a quantized linear of `config`'s method.
bool IsAnchor(const SafetensorsModel& weights, const QuantizationConfig& config,
              const SafetensorsTensor& tensor, std::string_view module, std::string_view suffix) {
  const std::string prefix = std::string(module) + ".";
  switch (config.method) {
    case QuantMethod::kGptq:
    case QuantMethod::kAwq:
      return suffix == "qweight";
    case QuantMethod::kFp8:
      if (suffix != "weight") return false;
      if (DtypeName(tensor) == "F8_E4M3") return true;
      return config.fp8.quantize_at_load && tensor.shape.size() == 2 &&
             IsSafetensorsFloatType(tensor.type) && IsProjectionModule(module);
    case QuantMethod::kCompressedTensors:
      return suffix == "weight_packed" ||
             (suffix == "weight" && weights.FindTensor(prefix + "weight_scale") != nullptr);
    case QuantMethod::kBitsAndBytes:
      if (suffix != "weight") return false;
      if (DtypeName(tensor) == "U8") {
        return weights.FindTensor(prefix + "weight.absmax") != nullptr ||
               weights.FindTensor(prefix + "weight.quant_state.bitsandbytes__nf4") != nullptr ||
               weights.FindTensor(prefix + "weight.quant_state.bitsandbytes__fp4") != nullptr;
      }
      return DtypeName(tensor) == "I8" && weights.FindTensor(prefix + "SCB") != nullptr;
    case QuantMethod::kNone:
      break;
  }
  return false;
}

}  // namespace

Expected<std::vector<QuantizedLinearTensors>> FindQuantizedLinears(
    const SafetensorsModel& weights, const QuantizationConfig& config) {
  std::vector<QuantizedLinearTensors> linears;
  if (config.method == QuantMethod::kNone) return linears;
  std::map<std::string, size_t, std::less<>> index_by_module;
  // Anchors first (in file order, so layers come in the order they are stored), then every part
  // of each anchored module.
  for (const SafetensorsTensor* tensor : weights.tensors()) {
    const size_t dot = tensor->name.rfind('.');
    if (dot == std::string::npos) continue;
    const std::string module = tensor->name.substr(0, dot);
    if (!IsAnchor(weights, config, *tensor, module,
                  std::string_view(tensor->name).substr(dot + 1)) ||
        config.Ignores(module)) {
      continue;
    }
    index_by_module.emplace(module, linears.size());
    linears.push_back({module, {}});
  }
  for (const SafetensorsTensor* tensor : weights.tensors()) {
    // The module is the longest anchored prefix (bitsandbytes suffixes hold dots).
    for (size_t dot = tensor->name.rfind('.'); dot != std::string::npos && dot > 0;
         dot = tensor->name.rfind('.', dot - 1)) {
      auto it = index_by_module.find(std::string_view(tensor->name).substr(0, dot));
      if (it == index_by_module.end()) continue;
      const std::string suffix = tensor->name.substr(dot + 1);
      if (IsPartSuffix(config.method, suffix)) linears[it->second].parts[suffix] = tensor;
      break;
    }
  }
  return linears;
}

Expected<ConvertedLinear> ConvertQuantizedLinear(const QuantizationConfig& config,
                                                 const QuantizedLinearTensors& tensors,
                                                 ThreadPool* pool) {
  switch (config.method) {
    case QuantMethod::kGptq:
      return ConvertGptqLinear(config.gptq, tensors, pool);
    case QuantMethod::kAwq:
      return ConvertAwqLinear(config.awq, tensors, pool);
    case QuantMethod::kFp8:
      return ConvertFp8Linear(config.fp8, tensors, pool);
    case QuantMethod::kCompressedTensors: {
      const CtScheme* scheme = config.SchemeFor(tensors.module);
      if (scheme == nullptr) {
        return Error{"module '" + tensors.module +
                     "' is stored quantized but no compressed-tensors config_groups entry "
                     "targets it"};
      }
      return ConvertCompressedTensorsLinear(*scheme, config.compressed_tensors.format, tensors,
                                            pool);
    }
    case QuantMethod::kBitsAndBytes:
      return ConvertBitsAndBytesLinear(config.bitsandbytes, tensors, pool);
    case QuantMethod::kNone:
      break;
  }
  return Error{"module '" + tensors.module + "': no quantization method to convert it with"};
}

}  // namespace vllm
