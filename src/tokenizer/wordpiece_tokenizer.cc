#include "tokenizer/wordpiece_tokenizer.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "common/utf8_encode.h"

namespace vllm {
namespace {

constexpr std::string_view kWordStart = "\xe2\x96\x81";  // ▁

bool IsCjk(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool IsWhitespace(UChar32 c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || u_charType(c) == U_SPACE_SEPARATOR;
}

bool IsControl(UChar32 c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  int8_t type = u_charType(c);
  return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_PRIVATE_USE_CHAR ||
         type == U_SURROGATE || type == U_UNASSIGNED;
}

// ASCII symbols count as punctuation, as in BERT.
bool IsPunctuation(UChar32 c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  return U_GET_GC_MASK(c) & U_GC_P_MASK;
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
    } else if (IsPunctuation(c) || IsCjk(c)) {
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
  const std::string text = std::string(kWordStart) + word;
  const size_t first_id = ids->size();
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.size(), start + max_token_bytes_);
    for (; end > start; --end) {
      auto it = vocab_.token_to_id.find(text.substr(start, end - start));
      if (it != vocab_.token_to_id.end()) {
        ids->push_back(it->second);
        break;
      }
    }
    if (end == start) {  // no piece fits: the whole word is unknown
      ids->resize(first_id);
      if (vocab_.unk_id >= 0) ids->push_back(vocab_.unk_id);
      return;
    }
    start = end;
  }
}

std::vector<int32_t> WordPieceTokenizer::Encode(std::string_view text,
                                                bool add_special_tokens) const {
  std::vector<int32_t> ids;
  if (add_special_tokens && add_bos_) ids.push_back(vocab_.bos_id);
  for (const TextFragment& fragment : special_splitter_.Split(text)) {
    if (fragment.token_id >= 0) {
      ids.push_back(fragment.token_id);
      continue;
    }
    for (const std::string& word : BertBasicWords(fragment.text)) EncodeWord(word, &ids);
  }
  if (add_special_tokens && add_sep_) ids.push_back(vocab_.sep_id);
  if (add_special_tokens && add_eos_) ids.push_back(vocab_.eos_id);
  return ids;
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
