#include "engine/engine_model.h"

#include "model/hf_overrides.h"
#include "model/pooler_config_flag.h"

namespace vllm {

Expected<EngineModel> LoadEngineModel(const EngineArgs& args, ThreadPool* pool,
                                      dist::Communicator* tensor_parallel) {
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
  auto loaded = LoadModelFromPath(model.paths.model,
                                  {.pool = pool,
                                   .linear_type = model.linear_type,
                                   .max_model_len = args.max_model_len,
                                   .pooler_config_flag = *pooler_config_flag,
                                   .hf_config_dir = model.paths.hf_config,
                                   .tensor_parallel = tensor_parallel},
                                  *hf_overrides, args.quantization);
  if (!loaded) return Error{loaded.error()};
  model.loaded = std::move(*loaded);
  return model;
}

}  // namespace vllm
