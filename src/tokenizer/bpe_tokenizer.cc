#include "tokenizer/bpe_tokenizer.h"

#include <queue>

#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace vllm {
namespace {

struct Symbol {
  int prev;
  int next;
  size_t start;
  size_t length;
};

struct Bigram {
  int32_t rank;
  int left;
  int right;
  size_t length;  // merged length, to detect stale entries
  bool operator<(const Bigram& other) const {
    // Lowest rank first; ties go to the leftmost pair.
    return rank > other.rank || (rank == other.rank && left > other.left);
  }
};

}  // namespace

Expected<std::unique_ptr<Tokenizer>> BpeTokenizer::Create(GgufVocab vocab) {
  auto patterns = PreTokenizerPatterns(vocab.pre);
  if (!patterns) return Error{"unsupported pre-tokenizer '" + vocab.pre + "'"};
  auto splitter = RegexSplitter::Create(*patterns);
  if (!splitter) return Error{splitter.error()};
  if (vocab.merges.empty()) return Error{"byte-level BPE vocabulary has no tokenizer.ggml.merges"};
  return std::unique_ptr<Tokenizer>(new BpeTokenizer(std::move(vocab), std::move(*splitter)));
}

BpeTokenizer::BpeTokenizer(GgufVocab vocab, RegexSplitter splitter)
    : vocab_(std::move(vocab)), pre_tokenizer_(std::move(splitter)), special_splitter_(vocab_) {
  merge_ranks_.reserve(vocab_.merges.size());
  for (size_t rank = 0; rank < vocab_.merges.size(); ++rank) {
    merge_ranks_.emplace(vocab_.merges[rank], static_cast<int32_t>(rank));
  }
}

bool BpeTokenizer::IsSpecial(int32_t id) const {
  return id >= 0 && id < vocab_size() && vocab_.types[id] == TokenType::kControl;
}

void BpeTokenizer::EncodeWord(std::string_view word, std::vector<int32_t>* ids) const {
  const std::string text = BytesToByteLevel(word);
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
  std::string key;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    key.assign(text, symbols[left].start, symbols[left].length);
    key += ' ';
    key.append(text, symbols[right].start, symbols[right].length);
    auto it = merge_ranks_.find(key);
    if (it == merge_ranks_.end()) return;
    queue.push({it->second, left, right, symbols[left].length + symbols[right].length});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length ||
        left.next != bigram.right) {
      continue;  // stale
    }
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }
  for (int i = 0; i >= 0; i = symbols[i].next) {
    std::string_view piece(text.data() + symbols[i].start, symbols[i].length);
    auto it = vocab_.token_to_id.find(std::string(piece));
    if (it != vocab_.token_to_id.end()) {
      ids->push_back(it->second);
      continue;
    }
    // Not in the vocabulary: fall back to its single characters that are.
    for (std::string_view character : SplitUtf8Characters(piece)) {
      auto single = vocab_.token_to_id.find(std::string(character));
      if (single != vocab_.token_to_id.end()) ids->push_back(single->second);
    }
  }
}

std::vector<int32_t> BpeTokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  if (add_special_tokens && vocab_.add_bos && vocab_.bos_id >= 0) ids.push_back(vocab_.bos_id);
  for (const TextFragment& fragment : special_splitter_.Split(text)) {
    if (fragment.token_id >= 0) {
      ids.push_back(fragment.token_id);
      continue;
    }
    for (std::string_view word : pre_tokenizer_.Split(fragment.text)) EncodeWord(word, &ids);
  }
  if (add_special_tokens && vocab_.add_eos && vocab_.eos_id >= 0) ids.push_back(vocab_.eos_id);
  return ids;
}

std::string BpeTokenizer::Decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::string text;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    const std::string& token = vocab_.tokens[id];
    switch (vocab_.types[id]) {
      case TokenType::kControl:
        if (!skip_special_tokens) text += token;
        break;
      case TokenType::kUserDefined:
        text += token;
        break;
      default:
        if (auto bytes = ByteLevelToBytes(token)) {
          text += *bytes;
        } else {
          text += token;
        }
    }
  }
  return text;
}

}  // namespace vllm
