// The checks of EngineArgs that need no model, made before anything is built from them (the
// thread pool comes first). The CLI, the server and the Python package all create their engine
// through LLMEngine::Create, which runs them, so each refuses the same values with the same words.
#pragma once

#include "common/expected.h"
#include "vllm/engine_args.h"

namespace vllm {

Status CheckEngineArgs(const EngineArgs& args);

// vLLM's check of a user's max_model_len against the model's context (max_position_embeddings
// less its position offset): longer is refused unless the environment sets
// VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (or true), which makes it a warning. 0 (the model's) passes.
Status CheckMaxModelLen(int64_t max_model_len, int64_t derived_max_model_len);

}  // namespace vllm
