#include "engine/engine_model.h"

#include <cstdlib>
#include <string>

#include "model/hf_overrides.h"
#include "model/pooler_config_flag.h"

namespace vllm {
namespace {

// vLLM's VLLM_PP_LAYER_PARTITION (empty when unset).
std::string PipelineLayerPartition() {
  const char* partition = std::getenv("VLLM_PP_LAYER_PARTITION");
  return partition == nullptr ? std::string() : std::string(partition);
}

}  // namespace

Expected<EngineModel> LoadEngineModel(const EngineArgs& args, ThreadPool* pool,
                                      dist::Communicator* model_ranks) {
  EngineModel model;
  auto linear_type = LinearTypeFor(args.dtype, args.quantization);
  if (!linear_type) return Error{linear_type.error()};
  model.linear_type = *linear_type;
  auto parsed_overrides = ParseHfOverrides(args.hf_overrides);
  if (!parsed_overrides) return Error{parsed_overrides.error()};
  auto hf_overrides =
      AddRopeOverrides(std::move(*parsed_overrides), args.rope_scaling, args.rope_theta);
  if (!hf_overrides) return Error{hf_overrides.error()};
  auto paths = ResolveModelPaths(args);
  if (!paths) return Error{paths.error()};
  model.paths = std::move(*paths);
  auto pooler_config_flag = ParsePoolerConfigFlag(args.pooler_config);
  if (!pooler_config_flag) return Error{pooler_config_flag.error()};
  // vLLM's ranks: world rank r runs stage r / tp as its tensor-parallel rank r % tp.
  dist::Communicator* tensor_parallel = args.tensor_parallel_size > 1 ? model_ranks : nullptr;
  dist::Communicator* pipeline_parallel = args.pipeline_parallel_size > 1 ? model_ranks : nullptr;
  if (model_ranks != nullptr && tensor_parallel != nullptr && pipeline_parallel != nullptr) {
    const int stage = model_ranks->rank() / args.tensor_parallel_size;
    auto stage_ranks = model_ranks->Split(stage);
    if (!stage_ranks) return Error{stage_ranks.error()};
    auto stages = model_ranks->Split(model_ranks->rank() % args.tensor_parallel_size);
    if (!stages) return Error{stages.error()};
    tensor_parallel = stage_ranks->get();
    pipeline_parallel = stages->get();
    model.parallel_groups.push_back(std::move(*stage_ranks));
    model.parallel_groups.push_back(std::move(*stages));
  }
  auto loaded = LoadModelFromPath(model.paths.model,
                                  {.pool = pool,
                                   .linear_type = model.linear_type,
                                   .max_model_len = args.max_model_len,
                                   .pooler_config_flag = *pooler_config_flag,
                                   .hf_config_dir = model.paths.hf_config,
                                   .tensor_parallel = tensor_parallel,
                                   .pipeline_parallel = pipeline_parallel,
                                   .pipeline_layer_partition = PipelineLayerPartition()},
                                  *hf_overrides, args.quantization);
  if (!loaded) return Error{loaded.error()};
  model.loaded = std::move(*loaded);
  return model;
}

}  // namespace vllm
