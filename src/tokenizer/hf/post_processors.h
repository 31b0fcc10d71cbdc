// Post-processors of tokenizer.json ("post_processor"), for a single sequence: the special ids
// that Encode with add_special_tokens puts before and after the text's ids. Supported types:
// TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel (adds nothing), Sequence.
#pragma once

#include <cstdint>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"

namespace vllm::hf {

struct SpecialTokenFrame {
  std::vector<int32_t> prefix;
  std::vector<int32_t> suffix;
};

// An empty frame for a null post-processor.
Expected<SpecialTokenFrame> ParsePostProcessor(const Json& json,
                                               std::string_view context = "post_processor");

}  // namespace vllm::hf
