// Which runner a model gets and which pooling tasks it serves (vLLM's --runner / --convert and
// supported_tasks), and a pooling request's PoolingParams resolved against the model's config
// into what the runner computes. The model's files fix the pooling type and head; requests only
// choose among what they allow.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "model/model_config.h"
#include "runner/pooling.h"
#include "vllm/engine_args.h"
#include "vllm/pooling_params.h"

namespace vllm {

// --runner: true for pooling. Encoder-only and bidirectional models are pooling models;
// "generate" refuses them.
// auto also picks pooling for checkpoints their files mark as pooling models (a Hugging Face
// *Model / *ForSequenceClassification architecture, a GGUF pooling_type).
Expected<bool> UsesPoolingRunner(const EngineArgs& args, const ModelConfig& config);

// The pooling tasks of a pooling runner, as vLLM names them: "classify" and "score" for a model
// with a classification head (--convert auto|classify), else "embed" and "score" (--convert
// auto|embed); "encode" (the pooler's raw output) always.
Expected<std::vector<std::string>> SupportedPoolingTasks(const EngineArgs& args,
                                                         const ModelConfig& config);

// `task` ("embed", "classify", "score", "encode") with `params` on this model (`model_name` in
// messages). Errors carry vLLM's messages (dimensions on a model that is not Matryoshka, or not
// among its matryoshka_dimensions, or on a classifier, ...).
Expected<PoolingSpec> ResolvePoolingSpec(const std::string& task, const PoolingParams& params,
                                         const ModelConfig& config, const std::string& model_name);

}  // namespace vllm
