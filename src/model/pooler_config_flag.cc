#include "model/pooler_config_flag.h"

#include <array>
#include <nlohmann/json.hpp>
#include <string_view>

namespace vllm {
namespace {

using Json = nlohmann::json;

// vLLM's PoolerConfig fields this build has no counterpart for, and why.
struct UnsupportedKey {
  std::string_view name;
  std::string_view reason;
};
constexpr std::array kUnsupportedKeys = {
    UnsupportedKey{"enable_chunked_processing",
                   "prompts longer than the context are refused, never pooled in chunks"},
    UnsupportedKey{"max_embed_len", "prompts longer than the context are refused"},
    UnsupportedKey{"logit_bias", "classifier scores carry no bias"},
    UnsupportedKey{"step_tag_id", "STEP pooling (process reward models) is not available"},
    UnsupportedKey{"returned_token_ids", "STEP pooling (process reward models) is not available"},
};

Expected<bool> BoolKey(const Json& value, const std::string& key) {
  if (!value.is_boolean()) return Error{"--pooler-config: " + key + " must be true or false"};
  return value.get<bool>();
}

}  // namespace

Expected<PoolerConfigFlag> ParsePoolerConfigFlag(const std::string& text) {
  PoolerConfigFlag flag;
  if (text.empty()) return flag;
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Error{"--pooler-config must be a JSON object, e.g. '{\"pooling_type\": \"MEAN\"}'"};
  }
  for (const auto& [key, value] : json.items()) {
    if (value.is_null()) continue;  // vLLM's default for every field
    if (key == "pooling_type") {
      if (!value.is_string()) return Error{"--pooler-config: pooling_type must be a string"};
      if (value.get<std::string>() == "STEP") {
        return Error{"--pooler-config: pooling_type STEP (process reward models) is not available"};
      }
      auto type = PoolingTypeFromName(value.get<std::string>());
      if (!type) return Error{"--pooler-config: " + type.error()};
      flag.pooling_type = *type;
    } else if (key == "normalize") {
      auto normalize = BoolKey(value, key);
      if (!normalize) return Error{normalize.error()};
      flag.normalize = *normalize;
    } else if (key == "dimensions") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1) {
        return Error{"--pooler-config: dimensions must be a positive integer"};
      }
      flag.dimensions = value.get<int64_t>();
    } else if (key == "activation" || key == "softmax" || key == "use_activation") {
      auto activation = BoolKey(value, key);
      if (!activation) return Error{activation.error()};
      flag.use_activation = *activation;
    } else {
      for (const UnsupportedKey& unsupported : kUnsupportedKeys) {
        if (key == unsupported.name) {
          return Error{"--pooler-config: " + key +
                       " is not supported: " + std::string(unsupported.reason)};
        }
      }
      return Error{"--pooler-config: unknown key '" + key +
                   "' (keys: pooling_type, normalize, dimensions, activation, softmax, "
                   "use_activation)"};
    }
  }
  return flag;
}

void ApplyPoolerConfigFlag(const PoolerConfigFlag& flag, PoolerConfig* config) {
  if (flag.pooling_type) config->pooling_type = *flag.pooling_type;
  if (flag.normalize) config->default_normalize = flag.normalize;
  if (flag.dimensions) config->default_dimensions = flag.dimensions;
  if (flag.use_activation) config->default_use_activation = flag.use_activation;
}

}  // namespace vllm
