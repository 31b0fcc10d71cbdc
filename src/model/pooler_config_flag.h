// vLLM's --pooler-config (and its older spelling --override-pooler-config): a JSON object whose
// keys replace what the model's files say about pooling. Parsed once from the command line, then
// applied to the model's PoolerConfig at load (ModelLoadOptions::pooler_config_flag).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/expected.h"
#include "model/pooling_config.h"

namespace vllm {

struct PoolerConfigFlag {
  std::optional<PoolingType> pooling_type;  // CLS, MEAN, LAST or ALL
  // Request defaults: a request that does not set its own takes these.
  std::optional<bool> normalize;
  std::optional<int64_t> dimensions;
  std::optional<bool> use_activation;  // vLLM's activation / softmax / use_activation
};

// The JSON object of --pooler-config (empty text: no keys). A key vLLM's PoolerConfig has but
// that means nothing this build can do (STEP pooling, chunked processing, logit_bias, ...) is
// refused by name unless null, vLLM's default; unknown keys and values of the wrong kind are
// refused as vLLM's config parser refuses them.
Expected<PoolerConfigFlag> ParsePoolerConfigFlag(const std::string& text);

// Replaces `config`'s pooling type and request defaults with the ones `flag` sets.
void ApplyPoolerConfigFlag(const PoolerConfigFlag& flag, PoolerConfig* config);

}  // namespace vllm
