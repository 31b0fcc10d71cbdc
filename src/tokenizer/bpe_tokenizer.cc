#include "tokenizer/bpe_tokenizer.h"

#include "common/utf8.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/symbol_merge.h"

namespace vllm {

Expected<std::unique_ptr<Tokenizer>> BpeTokenizer::Create(GgufVocab vocab) {
  auto config = FindPreTokenizerConfig(vocab.pre);
  if (!config) {
    std::string known;
    for (const std::string& name : KnownPreTokenizerNames())
      known += (known.empty() ? "" : ", ") + name;
    return Error{"unsupported pre-tokenizer '" + vocab.pre +
                 "' (tokenizer.ggml.pre; supported: " + known + ")"};
  }
  auto splitter = RegexSplitter::Create(config->patterns);
  if (!splitter) return Error{splitter.error()};
  if (vocab.merges.empty()) return Error{"byte-level BPE vocabulary has no tokenizer.ggml.merges"};
  return std::unique_ptr<Tokenizer>(
      new BpeTokenizer(std::move(vocab), *config, std::move(*splitter)));
}

BpeTokenizer::BpeTokenizer(GgufVocab vocab, const PreTokenizerConfig& config,
                           RegexSplitter splitter)
    : VocabTokenizer(std::move(vocab), config.add_bos_by_default, /*add_eos=*/false),
      pre_tokenizer_(std::move(splitter)),
      ignore_merges_(config.ignore_merges) {
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
  if (ignore_merges_) {
    auto whole = vocab_.token_to_id.find(text);
    if (whole != vocab_.token_to_id.end()) {
      ids->push_back(whole->second);
      return;
    }
  }
  std::string key;
  // Merge by rank, lowest first: the priority is the negated rank.
  auto rank_of = [&](std::string_view left, std::string_view right) -> std::optional<double> {
    key.assign(left);
    key += ' ';
    key.append(right);
    auto it = merge_ranks_.find(key);
    if (it == merge_ranks_.end()) return std::nullopt;
    return -static_cast<double>(it->second);
  };
  for (std::string_view piece : MergeSymbols(text, rank_of)) {
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

void BpeTokenizer::EncodeFragment(std::string_view text, bool /*after_special*/,
                                  std::vector<int32_t>* ids) const {
  for (std::string_view word : pre_tokenizer_.Split(text)) EncodeWord(word, ids);
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
