#include "engine/pooling_tasks.h"

#include <algorithm>

namespace vllm {

Expected<bool> UsesPoolingRunner(const EngineArgs& args, const ModelConfig& config) {
  if (args.runner == "pooling") return true;
  if (args.runner == "auto") return config.is_encoder;
  if (args.runner == "generate") {
    if (config.is_encoder) {
      return Error{"--runner generate: " + config.architecture +
                   " is an encoder-only model and only serves pooling tasks (--runner pooling)"};
    }
    return false;
  }
  return Error{"--runner must be auto, generate or pooling, got '" + args.runner + "'"};
}

Expected<std::vector<std::string>> SupportedPoolingTasks(const EngineArgs& args,
                                                         const ModelConfig& config) {
  const bool has_head = config.num_labels > 0;
  if (args.convert == "classify" || (args.convert == "auto" && has_head)) {
    if (!has_head) {
      return Error{"--convert classify: the model has no sequence-classification head"};
    }
    return std::vector<std::string>{"classify", "score", "encode"};
  }
  if (args.convert == "embed" || args.convert == "auto") {
    return std::vector<std::string>{"embed", "score", "encode"};
  }
  return Error{"--convert must be auto, embed or classify, got '" + args.convert + "'"};
}

Expected<PoolingSpec> ResolvePoolingSpec(const std::string& task, const PoolingParams& params,
                                         const ModelConfig& config) {
  PoolingSpec spec;
  spec.pooling_type = config.pooler.pooling_type;
  if (spec.pooling_type == PoolingType::kUnset) {
    // vLLM's defaults: encoders pool their first token, decoders their last.
    spec.pooling_type = config.is_encoder ? PoolingType::kCls : PoolingType::kLast;
  }
  const bool classifier = config.num_labels > 0;
  if (task == "classify" || (task == "score" && classifier)) {
    if (params.dimensions) return Error{"dimensions is not supported for classification"};
    spec.classify = true;
    if (params.use_activation.value_or(true)) {
      spec.activation =
          config.num_labels == 1 ? PoolingActivation::kSigmoid : PoolingActivation::kSoftmax;
    }
    if (spec.pooling_type == PoolingType::kAll) spec.pooling_type = PoolingType::kCls;
    return spec;
  }
  if (task != "embed" && task != "score" && task != "encode") {
    return Error{"unknown pooling task '" + task + "'"};
  }
  if (task != "encode" && spec.pooling_type == PoolingType::kAll) {
    spec.pooling_type = config.is_encoder ? PoolingType::kCls : PoolingType::kLast;
  }
  spec.normalize = params.normalize.value_or(task != "encode");
  if (params.dimensions) {
    if (*params.dimensions < 1) return Error{"Dimensions must be greater than 0"};
    if (*params.dimensions > config.hidden_size) {
      return Error{"Dimensions must be at most the model's hidden size (" +
                   std::to_string(config.hidden_size) + ")"};
    }
    spec.dimensions = *params.dimensions;
  }
  return spec;
}

}  // namespace vllm
