// Post-processors of tokenizer.json ("post_processor"): the special ids that Encode with
// add_special_tokens puts before and after the text's ids, and the template EncodePair lays a
// pair of texts out by. Supported types: TemplateProcessing, BertProcessing, RobertaProcessing,
// ByteLevel (adds nothing), Sequence.
#pragma once

#include <cstdint>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"

namespace vllm::hf {

// One piece of a pair template: the ids of the first or second text, or special ids; every id
// of the piece takes its type_id (the segment a cross-encoder sees).
struct PairPiece {
  enum class Kind { kFirst, kSecond, kSpecial };
  Kind kind;
  int32_t type_id = 0;
  std::vector<int32_t> special_ids;  // kSpecial only
};

struct SpecialTokenFrame {
  std::vector<int32_t> prefix;
  std::vector<int32_t> suffix;
  // The pair layout; without a post-processor, the first text (type 0) then the second (type 1).
  std::vector<PairPiece> pair = {{PairPiece::Kind::kFirst, 0, {}},
                                 {PairPiece::Kind::kSecond, 1, {}}};
};

// An empty frame for a null post-processor.
Expected<SpecialTokenFrame> ParsePostProcessor(const Json& json,
                                               std::string_view context = "post_processor");

}  // namespace vllm::hf
