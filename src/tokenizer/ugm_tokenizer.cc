#include "tokenizer/ugm_tokenizer.h"

namespace vllm {
namespace {

constexpr std::string_view kSpaceMarker = "\xe2\x96\x81";  // U+2581 ▁

// Only ordinary pieces are matched in text; special and user-defined tokens are split out before.
UnigramSegmenter MakeSegmenter(const GgufVocab& vocab) {
  std::vector<double> scores(vocab.scores.begin(), vocab.scores.end());
  std::vector<bool> is_candidate(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    is_candidate[id] = vocab.types[id] == TokenType::kNormal;
  }
  return UnigramSegmenter(vocab.tokens, scores, is_candidate);
}

}  // namespace

Expected<std::unique_ptr<Tokenizer>> UgmTokenizer::Create(GgufVocab vocab) {
  auto charsmap = PrecompiledCharsmap::Parse(vocab.precompiled_charsmap);
  if (!charsmap) return Error{"tokenizer.ggml.precompiled_charsmap: " + charsmap.error()};
  return std::unique_ptr<Tokenizer>(new UgmTokenizer(std::move(vocab), std::move(*charsmap)));
}

UgmTokenizer::UgmTokenizer(GgufVocab vocab, PrecompiledCharsmap charsmap)
    : SpmTokenizer(std::move(vocab), /*add_bos=*/false, /*add_eos=*/true),
      charsmap_(std::move(charsmap)),
      segmenter_(MakeSegmenter(vocab_)) {}

std::string UgmTokenizer::Normalize(std::string_view text) const {
  const bool merge_spaces = vocab_.remove_extra_whitespaces;
  std::string normalized, out;
  out.reserve(text.size() + text.size() / 4 + kSpaceMarker.size());
  // SentencePiece's dummy prefix goes in front of the text; when spaces merge, leading spaces
  // drop first, so it lands in front of the first word.
  if (vocab_.add_space_prefix && !merge_spaces && !text.empty()) out += kSpaceMarker;
  bool seen_word = false;
  bool after_space = false;
  for (size_t pos = 0; pos < text.size();) {
    normalized.clear();
    pos += charsmap_.NormalizePrefix(text.substr(pos), &normalized);
    for (char c : normalized) {
      if (c == ' ') {
        if (!merge_spaces) out += kSpaceMarker;
        after_space = true;
        continue;
      }
      // With merged spaces: one ▁ for a whole run between words, none after the last word.
      if (merge_spaces && (seen_word ? after_space : vocab_.add_space_prefix)) {
        out += kSpaceMarker;
      }
      seen_word = true;
      after_space = false;
      out += c;
    }
  }
  return out;
}

void UgmTokenizer::EncodeFragment(std::string_view text, bool /*after_special*/,
                                  std::vector<int32_t>* ids) const {
  const std::string normalized = Normalize(text);
  std::vector<UnigramSegmenter::Segment> segments;
  segmenter_.Split(normalized, &segments);
  for (const UnigramSegmenter::Segment& segment : segments) {
    if (segment.id != UnigramSegmenter::kUnknown) {
      ids->push_back(segment.id);
      continue;
    }
    const std::string_view run =
        std::string_view(normalized).substr(segment.begin, segment.end - segment.begin);
    bool all_bytes = true;
    for (unsigned char byte : run) all_bytes = all_bytes && byte_token_ids_[byte] >= 0;
    if (all_bytes) {
      for (unsigned char byte : run) ids->push_back(byte_token_ids_[byte]);
    } else if (vocab_.unk_id >= 0) {
      ids->push_back(vocab_.unk_id);
    }
  }
}

}  // namespace vllm
