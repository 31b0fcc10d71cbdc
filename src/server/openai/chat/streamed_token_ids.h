// vLLM's return_token_ids in a chat stream: each delta chunk of a choice carries the ids
// generated since that choice's previous chunk. A delta that sends no chunk (text the parsers
// hold back, a token that decodes to nothing yet) keeps its ids for the next one, so the ids of
// a choice's chunks, joined, are its whole token_ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace vllm::server {

class StreamedTokenIds {
 public:
  explicit StreamedTokenIds(size_t num_choices) : unsent_(num_choices) {}

  // Choice `choice` generated `token_ids`.
  void Add(size_t choice, std::span<const int32_t> token_ids);
  // The ids for the chunk of choice `choice` being sent: those not sent yet, which it takes.
  std::vector<int32_t> Take(size_t choice);

 private:
  std::vector<std::vector<int32_t>> unsent_;  // [num_choices]
};

}  // namespace vllm::server
