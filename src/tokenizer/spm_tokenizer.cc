#include "tokenizer/spm_tokenizer.h"

#include <cstdio>
#include <optional>

#include "tokenizer/symbol_merge.h"

namespace vllm {
namespace {

constexpr std::string_view kSpaceMarker = "\xe2\x96\x81";  // U+2581 ▁

std::string EscapeSpaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    if (c == ' ')
      out += kSpaceMarker;
    else
      out += c;
  }
  return out;
}

// "<0xXX>" → XX; nullopt for any other text.
std::optional<int> ParseByteToken(std::string_view token) {
  if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>') return std::nullopt;
  int value = 0;
  for (char c : token.substr(3, 2)) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return std::nullopt;
    value = value * 16 + digit;
  }
  return value;
}

}  // namespace

SpmTokenizer::SpmTokenizer(GgufVocab vocab)
    : SpmTokenizer(std::move(vocab), /*add_bos=*/true, /*add_eos=*/false) {}

SpmTokenizer::SpmTokenizer(GgufVocab vocab, bool add_bos, bool add_eos)
    : VocabTokenizer(std::move(vocab), add_bos, add_eos) {
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    auto it = vocab_.token_to_id.find(name);
    byte_token_ids_[byte] = it == vocab_.token_to_id.end() ? -1 : it->second;
  }
}

bool SpmTokenizer::IsSpecial(int32_t id) const {
  return id >= 0 && id < vocab_size() &&
         (vocab_.types[id] == TokenType::kControl || vocab_.types[id] == TokenType::kUnknown);
}

void SpmTokenizer::EmitPiece(std::string_view piece, std::vector<int32_t>* ids) const {
  auto it = vocab_.token_to_id.find(std::string(piece));
  if (it != vocab_.token_to_id.end()) {
    ids->push_back(it->second);
    return;
  }
  for (unsigned char byte : piece) {
    const int32_t id = byte_token_ids_[byte] >= 0 ? byte_token_ids_[byte] : vocab_.unk_id;
    if (id >= 0) ids->push_back(id);  // a vocabulary with neither drops the byte
  }
}

void SpmTokenizer::EncodeText(std::string_view text, std::vector<int32_t>* ids) const {
  std::string merged;
  // Merge by the score of the merged piece in the vocabulary.
  auto score_of = [&](std::string_view left, std::string_view right) -> std::optional<double> {
    merged.assign(left);
    merged.append(right);
    auto it = vocab_.token_to_id.find(merged);
    if (it == vocab_.token_to_id.end()) return std::nullopt;
    return vocab_.scores[it->second];
  };
  for (std::string_view piece : MergeSymbols(text, score_of)) EmitPiece(piece, ids);
}

void SpmTokenizer::EncodeFragment(std::string_view text, bool after_special,
                                  std::vector<int32_t>* ids) const {
  std::string piece = vocab_.add_space_prefix && after_special ? " " : "";
  piece += text;
  EncodeText(EscapeSpaces(piece), ids);
}

std::string SpmTokenizer::Decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::string text;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    const std::string& token = vocab_.tokens[id];
    switch (vocab_.types[id]) {
      case TokenType::kByte:
        if (auto byte = ParseByteToken(token)) {
          text += static_cast<char>(*byte);
          break;
        }
        text += token;
        break;
      case TokenType::kControl:
      case TokenType::kUnknown:
        if (!skip_special_tokens) text += token;
        break;
      default:
        for (size_t pos = 0; pos < token.size();) {
          if (token.compare(pos, kSpaceMarker.size(), kSpaceMarker) == 0) {
            text += ' ';
            pos += kSpaceMarker.size();
          } else {
            text += token[pos++];
          }
        }
    }
  }
  // SentencePiece drops the space it added in front of the text.
  if (vocab_.add_space_prefix && !text.empty() && text[0] == ' ') text.erase(0, 1);
  return text;
}

}  // namespace vllm
