#include "tokenizer/token_bytes.h"

#include <array>

namespace vllm {

std::vector<std::string> TokenByteStrings(const Tokenizer& tokenizer) {
  // Each token is decoded after a probe token and the probe's own text is cut off: decoders
  // treat the first token of a text apart (SentencePiece drops its leading space, WordPiece
  // joins "##" pieces to what precedes them), and a token in the middle of an output is not first.
  const std::vector<int32_t> probe_ids = tokenizer.Encode("a", /*add_special_tokens=*/false);
  const int32_t probe = probe_ids.empty() ? -1 : probe_ids.front();
  const std::string probe_text =
      probe < 0 ? std::string() : tokenizer.DecodeBytes(std::array{probe});
  std::vector<std::string> token_bytes(tokenizer.vocab_size());
  for (int32_t id = 0; id < static_cast<int32_t>(token_bytes.size()); ++id) {
    if (tokenizer.IsSpecial(id)) continue;
    if (probe < 0) {
      token_bytes[id] = tokenizer.DecodeBytes(std::array{id});
      continue;
    }
    std::string text = tokenizer.DecodeBytes(std::array{probe, id});
    if (text.compare(0, probe_text.size(), probe_text) == 0) {
      token_bytes[id] = text.substr(probe_text.size());
    }
  }
  return token_bytes;
}

}  // namespace vllm
