// The model the engine's arguments name, loaded as LLMEngine loads it: --dtype / --quantization,
// --hf-overrides with the rope shorthands, --pooler-config, --hf-config-path, --max-model-len. A
// tensor-parallel worker rank loads its shard through the same function, so every rank builds the
// same model.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "common/ggml_type.h"
#include "common/thread_pool.h"
#include "dist/communicator.h"
#include "engine/model_paths.h"
#include "model/model_loader.h"
#include "vllm/engine_args.h"

namespace vllm {

struct EngineModel {
  ModelPaths paths;                     // the resolved model, tokenizer and draft model
  std::optional<GgmlType> linear_type;  // LinearTypeFor(args.dtype, args.quantization)
  // With tensor and pipeline parallel together: the ranks of this rank's stage and this rank's
  // peers of the other stages, split from the job's ranks; they must outlive `loaded`.
  std::vector<std::unique_ptr<dist::Communicator>> parallel_groups;
  LoadedModel loaded;
};

// `model_ranks`: the group this rank is one of, splitting the model as args'
// tensor_parallel_size or pipeline_parallel_size say (null: the whole model in this process).
Expected<EngineModel> LoadEngineModel(const EngineArgs& args, ThreadPool* pool,
                                      dist::Communicator* model_ranks);

}  // namespace vllm
