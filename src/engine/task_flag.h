// --task (Python: LLM(task=...)): vLLM 0.10's deprecated spelling of --runner / --convert (vLLM's
// ModelConfig maps one to the others when it is given), still found in deployments' command lines
// and scripts. In the engine room so that the CLI and the Python package share it.
#pragma once

#include <string_view>

#include "common/expected.h"
#include "vllm/engine_args.h"

namespace vllm {

// vLLM's --task choices.
inline constexpr std::string_view kTaskNames[] = {"auto",   "generate",      "embedding",
                                                  "embed",  "classify",      "score",
                                                  "reward", "transcription", "draft"};

// Sets args->runner and args->convert as vLLM does for `task` (a given --task replaces both, as
// in vLLM): generate / transcription run the generate runner; embed / embedding, classify and
// score the pooling runner with convert embed, classify and auto (score picks classify when the
// model has a classification head, as vLLM's default pooling task does); auto and draft leave
// both to auto. Logs vLLM's deprecation with the flags to use instead. reward (a reward model's
// pooler, which this build lacks) and names outside kTaskNames are errors naming them.
Status ApplyDeprecatedTask(std::string_view task, EngineArgs* args);

}  // namespace vllm
