// libFuzzer entry point: any bytes as tokenizer.json must load or give an error, never crash,
// and a tokenizer that loads must encode and decode text safely.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tokenizer/hf/hf_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tokenizer =
      vllm::LoadTokenizerFromHfJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (tokenizer.ok()) {
    const auto ids = (*tokenizer)->Encode("Hello wörld 123 <s> \xF0\x9F\x98\x80!", true);
    (*tokenizer)->Decode(ids, false);
    (*tokenizer)->Decode(ids, true);
    (*tokenizer)->EncodePair("\xEF\xBC\xA1 a\xCC\x88\xCC\x81  fi", "\xE2\x91\xA0 \xC3\xA9");
    for (int32_t id : ids) (*tokenizer)->TokenToPiece(id);
  }
  return 0;
}
