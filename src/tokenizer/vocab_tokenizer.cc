// Encode's frame and pair encoding for GGUF-vocabulary tokenizers (the pair as llama.cpp lays
// out a reranker's input).
#include "tokenizer/vocab_tokenizer.h"

namespace vllm {

std::vector<int32_t> VocabTokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  if (add_special_tokens && add_bos_) ids.push_back(vocab_.bos_id);
  bool after_special = true;  // the text's start counts as following a special token
  for (const TextFragment& fragment : special_splitter_.Split(text)) {
    if (fragment.token_id >= 0) {
      ids.push_back(fragment.token_id);
      after_special = vocab_.space_prefix_after_special;
      continue;
    }
    EncodeFragment(fragment.text, after_special, &ids);
    after_special = false;
  }
  if (add_special_tokens && add_sep_) ids.push_back(vocab_.sep_id);
  if (add_special_tokens && add_eos_) ids.push_back(vocab_.eos_id);
  return ids;
}

Tokenizer::EncodedPair VocabTokenizer::EncodePair(std::string_view first,
                                                  std::string_view second) const {
  EncodedPair pair;
  auto append = [&pair](const std::vector<int32_t>& ids, int32_t segment) {
    pair.ids.insert(pair.ids.end(), ids.begin(), ids.end());
    pair.token_type_ids.resize(pair.ids.size(), segment);
  };
  const std::vector<int32_t> first_ids = Encode(first, /*add_special_tokens=*/false);
  const std::vector<int32_t> second_ids = Encode(second, /*add_special_tokens=*/false);
  if (vocab_.model == "bert") {
    const int32_t cls_id = vocab_.cls_id >= 0 ? vocab_.cls_id : vocab_.bos_id;
    std::vector<int32_t> head, tail = second_ids;
    if (cls_id >= 0) head.push_back(cls_id);
    head.insert(head.end(), first_ids.begin(), first_ids.end());
    if (vocab_.sep_id >= 0) {
      head.push_back(vocab_.sep_id);
      tail.push_back(vocab_.sep_id);
    }
    append(head, 0);
    append(tail, 1);
    return pair;
  }
  const int32_t end_id = vocab_.eos_id >= 0 ? vocab_.eos_id : vocab_.sep_id;
  const bool add_end = vocab_.add_eos.value_or(add_eos_) && end_id >= 0;
  const bool add_sep = vocab_.add_sep.value_or(false) && vocab_.sep_id >= 0;
  std::vector<int32_t> ids;
  if (add_bos_) ids.push_back(vocab_.bos_id);
  ids.insert(ids.end(), first_ids.begin(), first_ids.end());
  if (add_end) ids.push_back(end_id);
  if (add_sep) ids.push_back(vocab_.sep_id);
  ids.insert(ids.end(), second_ids.begin(), second_ids.end());
  if (add_end) ids.push_back(end_id);
  append(ids, 0);
  return pair;
}

}  // namespace vllm
