#include "tokenizer/wordpiece_tokenizer.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "common/utf8_encode.h"
#include "tokenizer/hf/unicode_chars.h"
#include "tokenizer/wordpiece_match.h"

namespace vllm {
namespace {

constexpr std::string_view kWordStart = "\xe2\x96\x81";  // ▁

bool IsWhitespace(UChar32 c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || u_charType(c) == U_SPACE_SEPARATOR;
}

bool IsControl(UChar32 c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  int8_t type = u_charType(c);
  return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_PRIVATE_USE_CHAR ||
         type == U_SURROGATE || type == U_UNASSIGNED;
}

// BERT vocabularies name their first token [CLS] (tokenizer.ggml.cls_token_id); it is the BOS.
GgufVocab UseClsAsBos(GgufVocab vocab) {
  if (vocab.bos_id < 0) vocab.bos_id = vocab.cls_id;
  return vocab;
}

}  // namespace

std::vector<std::string> BertBasicWords(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  icu::UnicodeString decomposed =
      nfd->normalize(icu::UnicodeString::fromUTF8(
                         icu::StringPiece(text.data(), static_cast<int32_t>(text.size()))),
                     status);
  std::vector<std::string> words(1);
  auto end_word = [&words] {
    if (!words.back().empty()) words.emplace_back();
  };
  for (int32_t i = 0; i < decomposed.length(); i = decomposed.moveIndex32(i, 1)) {
    UChar32 c = decomposed.char32At(i);
    if (IsWhitespace(c)) {
      end_word();
    } else if (c == 0 || c == 0xFFFD || IsControl(c) || u_charType(c) == U_NON_SPACING_MARK) {
      continue;  // dropped; accents go with the non-spacing marks NFD split off
    } else if (hf::IsPunctuation(c) || hf::IsCjk(c)) {  // ASCII symbols count, as in BERT
      end_word();
      AppendUtf8(static_cast<char32_t>(u_tolower(c)), &words.back());
      words.emplace_back();
    } else {
      AppendUtf8(static_cast<char32_t>(u_tolower(c)), &words.back());
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

WordPieceTokenizer::WordPieceTokenizer(GgufVocab vocab)
    : VocabTokenizer(UseClsAsBos(std::move(vocab)), /*add_bos=*/true, /*add_eos=*/false) {
  add_sep_ = vocab_.add_sep.value_or(true) && vocab_.sep_id >= 0;
  for (const std::string& token : vocab_.tokens)
    max_token_bytes_ = std::max(max_token_bytes_, token.size());
}

bool WordPieceTokenizer::IsSpecial(int32_t id) const {
  return id >= 0 && id < vocab_size() &&
         (vocab_.types[id] == TokenType::kControl || vocab_.types[id] == TokenType::kUnknown);
}

void WordPieceTokenizer::EncodeWord(const std::string& word, std::vector<int32_t>* ids) const {
  auto find = [this](const std::string& piece) -> std::optional<int32_t> {
    auto it = vocab_.token_to_id.find(piece);
    if (it == vocab_.token_to_id.end()) return std::nullopt;
    return it->second;
  };
  // GGUF marks the word's first piece with ▁, so continuation pieces need no prefix.
  const std::string text = std::string(kWordStart) + word;
  if (!AppendWordPieces(text, /*continuation_prefix=*/"", max_token_bytes_, find, ids) &&
      vocab_.unk_id >= 0) {
    ids->push_back(vocab_.unk_id);
  }
}

void WordPieceTokenizer::EncodeFragment(std::string_view text, bool /*after_special*/,
                                        std::vector<int32_t>* ids) const {
  for (const std::string& word : BertBasicWords(text)) EncodeWord(word, ids);
}

std::string WordPieceTokenizer::Decode(std::span<const int32_t> ids,
                                       bool skip_special_tokens) const {
  std::string text;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    if (IsSpecial(id) && skip_special_tokens) continue;
    std::string_view token = vocab_.tokens[id];
    if (token.substr(0, kWordStart.size()) == kWordStart) {
      text += ' ';
      token.remove_prefix(kWordStart.size());
    } else if (IsSpecial(id)) {
      text += ' ';
    }
    text += token;
  }
  if (!text.empty() && text[0] == ' ') text.erase(0, 1);
  return text;
}

}  // namespace vllm
