#include "engine/task_flag.h"

#include <algorithm>
#include <string>

#include "common/logging.h"

namespace vllm {

Status ApplyDeprecatedTask(std::string_view task, EngineArgs* args) {
  const std::string named = "--task " + std::string(task);
  if (std::find(std::begin(kTaskNames), std::end(kTaskNames), task) == std::end(kTaskNames)) {
    return Error{named +
                 ": not one of vLLM's tasks (auto, generate, embedding, embed, classify, score, "
                 "reward, transcription, draft)"};
  }
  if (task == "reward") {
    return Error{named +
                 ": reward models (vLLM's --convert reward) are not supported by this "
                 "build; --runner pooling --convert embed|classify are"};
  }
  std::string instead = "remove it";
  args->runner = "auto";
  args->convert = "auto";
  if (task == "generate" || task == "transcription") {
    args->runner = "generate";
    instead = "use --runner generate";
  } else if (task != "auto" && task != "draft") {
    args->runner = "pooling";
    args->convert = task == "embed" || task == "embedding" ? "embed"
                    : task == "classify"                   ? "classify"
                                                           : "auto";
    instead = "use --runner pooling" +
              (args->convert == "auto" ? std::string() : " --convert " + args->convert);
  }
  VLLM_LOG(kWarning) << named << " is deprecated (vLLM 0.10 replaced --task by --runner and "
                     << "--convert): " << instead;
  return Status::Ok();
}

}  // namespace vllm
