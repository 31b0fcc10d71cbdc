// Tokenizer's default pair encoding (its own file: as the class's first out-of-line virtual it
// carries the vtable, which the tokenizer.json fuzzer needs without the GGUF loaders).
#include "tokenizer/tokenizer.h"

namespace vllm {

Tokenizer::EncodedPair Tokenizer::EncodePair(std::string_view first,
                                             std::string_view second) const {
  EncodedPair pair;
  pair.ids = Encode(first, /*add_special_tokens=*/false);
  pair.token_type_ids.assign(pair.ids.size(), 0);
  const std::vector<int32_t> second_ids = Encode(second, /*add_special_tokens=*/false);
  pair.ids.insert(pair.ids.end(), second_ids.begin(), second_ids.end());
  pair.token_type_ids.resize(pair.ids.size(), 1);
  return pair;
}

}  // namespace vllm
