// The BPE model: a piece starts as its characters (each a vocabulary token, its bytes as <0xXX>
// tokens with byte_fallback, or the unknown token) and adjacent tokens merge by the rank of
// their pair in `merges`, lowest first. Supports continuing_subword_prefix, end_of_word_suffix,
// fuse_unk and ignore_merges; dropout is ignored.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <unordered_map>

#include "tokenizer/hf/model.h"

namespace vllm::hf {

class BpeModel : public Model {
 public:
  static Expected<std::unique_ptr<Model>> Parse(const Json& json, std::string_view context);

  void Tokenize(std::string_view piece, std::vector<int32_t>* ids) const override;

 private:
  explicit BpeModel(Vocab vocab) : Model(std::move(vocab)) {}
  // The token a sub-piece of `piece` stands for, with the prefix / suffix its position gives it.
  std::string_view Decorate(std::string_view piece, std::string_view part,
                            std::string* storage) const;

  std::unordered_map<uint64_t, int32_t> merge_ranks_;  // left id << 32 | right id → rank
  std::string prefix_;                                 // continuing_subword_prefix
  std::string suffix_;                                 // end_of_word_suffix
  std::optional<int32_t> unk_id_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::array<int32_t, 256> byte_ids_{};  // the <0xXX> tokens; -1 where absent
};

}  // namespace vllm::hf
