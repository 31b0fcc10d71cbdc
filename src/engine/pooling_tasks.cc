#include "engine/pooling_tasks.h"

#include <algorithm>

namespace vllm {

Expected<bool> UsesPoolingRunner(const EngineArgs& args, const ModelConfig& config) {
  if (args.runner == "pooling") return true;
  const bool pooling_only = config.is_encoder || config.bidirectional_attention;
  if (args.runner == "auto") return pooling_only || config.pooler.is_pooling_checkpoint;
  if (args.runner == "generate") {
    if (pooling_only) {
      return Error{"--runner generate: " + config.architecture +
                   " attends bidirectionally (an encoder-only model) and only serves pooling "
                   "tasks (--runner pooling)"};
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

namespace {

// vLLM's checks of a request's `dimensions` (PoolingParams.verify).
Status CheckDimensions(int64_t dimensions, const ModelConfig& config,
                       const std::string& model_name) {
  const PoolerConfig& pooler = config.pooler;
  if (!pooler.is_matryoshka) {
    return Error{"Model \"" + model_name +
                 "\" does not support matryoshka representation, changing output dimensions "
                 "will lead to poor results."};
  }
  if (!pooler.matryoshka_dimensions.empty()) {
    const auto& allowed = pooler.matryoshka_dimensions;
    if (std::find(allowed.begin(), allowed.end(), dimensions) == allowed.end()) {
      std::string list;
      for (int64_t d : allowed) list += (list.empty() ? "" : ", ") + std::to_string(d);
      return Error{"Model \"" + model_name + "\" only supports [" + list +
                   "] matryoshka dimensions, use other output dimensions will lead to poor "
                   "results."};
    }
  }
  if (dimensions < 1) return Error{"Dimensions must be greater than 0"};
  if (dimensions > config.hidden_size) {
    return Error{"Dimensions must be at most the model's hidden size (" +
                 std::to_string(config.hidden_size) + ")"};
  }
  return Status::Ok();
}

}  // namespace

Expected<PoolingSpec> ResolvePoolingSpec(const std::string& task, const PoolingParams& params,
                                         const ModelConfig& config, const std::string& model_name) {
  // vLLM's defaults: encoders pool their first token, decoders their last.
  const PoolingType default_type = config.is_encoder ? PoolingType::kCls : PoolingType::kLast;
  PoolingSpec spec;
  spec.pooling_type = config.pooler.pooling_type;
  if (spec.pooling_type == PoolingType::kUnset) spec.pooling_type = default_type;
  const bool classifier = config.num_labels > 0;
  if (task == "classify" || (task == "score" && classifier)) {
    if (params.dimensions) return Error{"dimensions is not supported for classification"};
    spec.classify = true;
    if (params.use_activation.value_or(config.pooler.default_use_activation.value_or(true))) {
      spec.activation =
          config.num_labels == 1 ? PoolingActivation::kSigmoid : PoolingActivation::kSoftmax;
    }
    if (spec.pooling_type == PoolingType::kAll) spec.pooling_type = default_type;
    return spec;
  }
  if (task != "embed" && task != "score" && task != "encode") {
    return Error{"unknown pooling task '" + task + "'"};
  }
  if (task != "encode" && spec.pooling_type == PoolingType::kAll) spec.pooling_type = default_type;
  spec.normalize =
      params.normalize.value_or(config.pooler.default_normalize.value_or(task != "encode"));
  if (auto dimensions = params.dimensions ? params.dimensions : config.pooler.default_dimensions) {
    VLLM_RETURN_IF_ERROR(CheckDimensions(*dimensions, config, model_name));
    spec.dimensions = *dimensions;
  }
  return spec;
}

}  // namespace vllm
