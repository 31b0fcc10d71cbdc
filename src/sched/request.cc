#include "sched/request.h"

namespace vllm {

const char* FinishReason(RequestStatus status) {
  switch (status) {
    case RequestStatus::kFinishedStopped:
      return "stop";
    case RequestStatus::kFinishedLengthCapped:
    case RequestStatus::kFinishedIgnored:
      return "length";
    case RequestStatus::kFinishedAborted:
      return "abort";
    default:
      return "";
  }
}

std::vector<int32_t> Request::all_token_ids() const {
  std::vector<int32_t> ids = prompt_token_ids;
  ids.insert(ids.end(), output_token_ids.begin(), output_token_ids.end());
  return ids;
}

}  // namespace vllm
