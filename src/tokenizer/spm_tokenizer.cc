#include "tokenizer/spm_tokenizer.h"

#include <cstdio>
#include <optional>
#include <queue>

#include "tokenizer/utf8.h"

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

// A symbol of the working string: a span of text linked to its neighbours.
struct Symbol {
  int prev;
  int next;
  size_t start;
  size_t length;
};

// A candidate merge of symbols left and left's next, ranked by the merged token's score.
struct Bigram {
  float score;
  int left;
  int right;
  size_t length;  // merged length, to detect stale entries
  bool operator<(const Bigram& other) const {
    // Highest score first; ties go to the leftmost pair.
    return score < other.score || (score == other.score && left > other.left);
  }
};

}  // namespace

SpmTokenizer::SpmTokenizer(GgufVocab vocab) : vocab_(std::move(vocab)), splitter_(vocab_) {
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
    int32_t id = byte_token_ids_[byte];
    ids->push_back(id >= 0 ? id : vocab_.unk_id);
  }
}

void SpmTokenizer::EncodeText(std::string_view text, std::vector<int32_t>* ids) const {
  std::vector<Symbol> symbols;
  size_t offset = 0;
  for (std::string_view character : SplitUtf8Characters(text)) {
    int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, index + 1, offset, character.size()});
    offset += character.size();
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  std::priority_queue<Bigram> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    size_t length = symbols[left].length + symbols[right].length;
    auto it = vocab_.token_to_id.find(std::string(text.substr(symbols[left].start, length)));
    if (it == vocab_.token_to_id.end()) return;
    queue.push({vocab_.scores[it->second], left, right, length});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    // Stale: one side was merged away or grew since this pair was queued.
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length ||
        left.next != bigram.right) {
      continue;
    }
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }
  for (int i = 0; i >= 0; i = symbols[i].next) {
    EmitPiece(text.substr(symbols[i].start, symbols[i].length), ids);
  }
}

std::vector<int32_t> SpmTokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  if (add_special_tokens && vocab_.add_bos && vocab_.bos_id >= 0) ids.push_back(vocab_.bos_id);
  bool after_special = true;  // the text's start counts as following a special token
  for (const TextFragment& fragment : splitter_.Split(text)) {
    if (fragment.token_id >= 0) {
      ids.push_back(fragment.token_id);
      after_special = true;
      continue;
    }
    std::string piece = vocab_.add_space_prefix && after_special ? " " : "";
    piece += fragment.text;
    EncodeText(EscapeSpaces(piece), &ids);
    after_special = false;
  }
  if (add_special_tokens && vocab_.add_eos && vocab_.eos_id >= 0) ids.push_back(vocab_.eos_id);
  return ids;
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
