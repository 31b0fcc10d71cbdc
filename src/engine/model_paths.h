// The local paths behind EngineArgs' model, --tokenizer and draft model: each may be a model id
// resolved in (or downloaded into) the Hugging Face cache, as vLLM resolves them (hub room).
#pragma once

#include <string>

#include "common/expected.h"
#include "vllm/engine_args.h"

namespace vllm {

struct ModelPaths {
  std::string model;
  std::string tokenizer;    // the model's path when --tokenizer is not given
  std::string draft_model;  // --speculative-config's draft model; empty: none
  std::string hf_config;    // --hf-config-path's directory (holding config.json); empty: none
};

// --tokenizer is resolved at --tokenizer-revision (else --revision) with only its tokenizer
// files fetched; the draft model at its main revision.
Expected<ModelPaths> ResolveModelPaths(const EngineArgs& args);

}  // namespace vllm
