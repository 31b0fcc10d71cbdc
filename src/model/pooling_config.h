// How a pooling model turns a sequence's hidden states into its output, as the model's files say:
// sentence-transformers' modules.json + 1_Pooling/config.json (+ a Normalize module) in a model
// directory, or "<arch>.pooling_type" in a GGUF file. The server and the API never override what
// the model fixes here; they only pick among what it allows.
#pragma once

#include <string>

#include "common/expected.h"

namespace vllm {

// vLLM's pooling types. kUnset: the model's files name none (the task's default applies).
enum class PoolingType { kUnset, kCls, kMean, kLast, kAll };

struct PoolerConfig {
  PoolingType pooling_type = PoolingType::kUnset;
  // sentence-transformers lists a Normalize module (the embeddings are unit vectors).
  bool normalize = false;
};

// "CLS", "MEAN", "LAST", "ALL" (vLLM's spelling, any case) → the type; an error names the others.
Expected<PoolingType> PoolingTypeFromName(const std::string& name);
const char* PoolingTypeName(PoolingType type);

// llama.cpp's pooling_type numbers: 0 none (kAll: per token), 1 mean, 2 cls, 3 last, 4 rank (a
// classifier over the CLS token).
Expected<PoolingType> PoolingTypeFromGguf(int64_t value);

// Reads `dir`/modules.json and the Pooling module's config.json when present; a directory
// without them leaves the config as it is. Malformed files are errors naming them.
Status ReadSentenceTransformersPooling(const std::string& dir, PoolerConfig* config);

}  // namespace vllm
