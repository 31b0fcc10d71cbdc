#include "server/openai/chat/streamed_token_ids.h"

#include <utility>

namespace vllm::server {

void StreamedTokenIds::Add(size_t choice, std::span<const int32_t> token_ids) {
  std::vector<int32_t>& unsent = unsent_.at(choice);
  unsent.insert(unsent.end(), token_ids.begin(), token_ids.end());
}

std::vector<int32_t> StreamedTokenIds::Take(size_t choice) {
  return std::exchange(unsent_.at(choice), {});
}

}  // namespace vllm::server
