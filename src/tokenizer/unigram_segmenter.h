// The Unigram model's segmentation (SentencePiece's Viterbi, as Hugging Face tokenizers and
// llama.cpp's UGM tokenizer run it): the split of a text into vocabulary pieces whose scores sum
// highest. A character that no piece starts with becomes an unknown segment of its own, scored
// the lowest piece score minus 10. Pieces are found with a byte trie, so a text of n bytes costs
// O(n * longest piece).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vllm {

class UnigramSegmenter {
 public:
  // pieces[id] with scores[id] takes part when is_candidate[id]; the others are never chosen.
  UnigramSegmenter(const std::vector<std::string>& pieces, const std::vector<double>& scores,
                   const std::vector<bool>& is_candidate);

  struct Segment {
    size_t begin;  // byte offsets in the text
    size_t end;
    int32_t id;  // kUnknown: a run of characters no piece covers
  };
  static constexpr int32_t kUnknown = -1;

  // Appends the best segmentation of `text`, in order, adjacent unknown characters fused into one
  // segment (SentencePiece and Hugging Face's fuse_unk). Ties go to the piece found first (the
  // earlier start, then the shorter piece), as in SentencePiece.
  void Split(std::string_view text, std::vector<Segment>* segments) const;

 private:
  // Child of `node` by `byte`; -1 when none.
  int32_t Child(int32_t node, unsigned char byte) const;

  std::vector<int32_t> node_piece_;  // [num_nodes]: the piece ending at a node, -1 when none
  std::unordered_map<uint64_t, int32_t> children_;  // (node << 8 | byte) → child node
  std::vector<double> scores_;
  double unknown_score_ = 0;
};

}  // namespace vllm
