// The Unigram model of tokenizer.json ({"type": "Unigram", "vocab": [[piece, score], ...],
// "unk_id": 3, "byte_fallback": false}): the best-scoring split of a piece into vocabulary
// pieces (UnigramSegmenter), runs of unknown characters fused into one unknown token (Hugging
// Face's fuse_unk, always on for Unigram), which with byte_fallback become their bytes as <0xXX>
// tokens when the vocabulary has them all.
#pragma once

#include <array>
#include <optional>

#include "tokenizer/hf/model.h"
#include "tokenizer/unigram_segmenter.h"

namespace vllm::hf {

class UnigramModel : public Model {
 public:
  static Expected<std::unique_ptr<Model>> Parse(const Json& json, std::string_view context);

  void Tokenize(std::string_view piece, std::vector<int32_t>* ids) const override;

 private:
  UnigramModel(Vocab vocab, UnigramSegmenter segmenter)
      : Model(std::move(vocab)), segmenter_(std::move(segmenter)) {}
  // Appends the ids of a run of unknown characters.
  void EmitUnknown(std::string_view run, std::vector<int32_t>* ids) const;

  UnigramSegmenter segmenter_;
  std::optional<int32_t> unk_id_;
  bool byte_fallback_ = false;
  std::array<int32_t, 256> byte_ids_{};  // the <0xXX> tokens; -1 where absent
};

}  // namespace vllm::hf
