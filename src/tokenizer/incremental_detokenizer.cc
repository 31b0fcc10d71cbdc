#include "tokenizer/incremental_detokenizer.h"

#include <algorithm>

#include "common/utf8.h"

namespace vllm {

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer,
                                               std::vector<int32_t> prompt_ids,
                                               bool skip_special_tokens)
    : tokenizer_(tokenizer),
      ids_(std::move(prompt_ids)),
      skip_special_tokens_(skip_special_tokens),
      prefix_offset_(ids_.size() - std::min(ids_.size(), kInitialContextTokens)),
      read_offset_(ids_.size()) {}

std::string IncrementalDetokenizer::Step(int32_t token_id) {
  ids_.push_back(token_id);
  std::span<const int32_t> ids(ids_);
  const std::string prefix_text = tokenizer_.Decode(
      ids.subspan(prefix_offset_, read_offset_ - prefix_offset_), skip_special_tokens_);
  const std::string new_text = tokenizer_.Decode(ids.subspan(prefix_offset_), skip_special_tokens_);
  // Wait while the text ends inside a character, or has not grown past the window's old text.
  if (new_text.size() <= prefix_text.size() || IncompleteUtf8Suffix(new_text) != 0) return "";
  std::string delta = new_text.substr(prefix_text.size());
  prefix_offset_ = read_offset_;
  read_offset_ = ids_.size();
  return delta;
}

std::string IncrementalDetokenizer::Flush() {
  std::span<const int32_t> ids(ids_);
  const std::string prefix_text = tokenizer_.Decode(
      ids.subspan(prefix_offset_, read_offset_ - prefix_offset_), skip_special_tokens_);
  const std::string new_text = tokenizer_.Decode(ids.subspan(prefix_offset_), skip_special_tokens_);
  std::string rest =
      new_text.size() > prefix_text.size() ? new_text.substr(prefix_text.size()) : "";
  prefix_offset_ = read_offset_ = ids_.size();
  return rest;
}

}  // namespace vllm
