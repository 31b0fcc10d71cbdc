// The checks of EngineArgs that need no model, made before anything is built from them (the
// thread pool comes first). The CLI, the server and the Python package all create their engine
// through LLMEngine::Create, which runs them, so each refuses the same values with the same words.
#pragma once

#include "common/expected.h"
#include "vllm/engine_args.h"

namespace vllm {

Status CheckEngineArgs(const EngineArgs& args);

}  // namespace vllm
