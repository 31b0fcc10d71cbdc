#include "tokenizer/unigram_segmenter.h"

#include <algorithm>
#include <limits>

#include "tokenizer/hf/unicode_chars.h"

namespace vllm {
namespace {

constexpr double kUnknownPenalty = 10.0;  // SentencePiece's kUnkPenalty

}  // namespace

UnigramSegmenter::UnigramSegmenter(const std::vector<std::string>& pieces,
                                   const std::vector<double>& scores,
                                   const std::vector<bool>& is_candidate)
    : node_piece_(1, -1), scores_(scores) {
  double min_score = std::numeric_limits<double>::max();
  for (size_t id = 0; id < pieces.size(); ++id) {
    if (!is_candidate[id] || pieces[id].empty()) continue;
    min_score = std::min(min_score, scores[id]);
    int32_t node = 0;
    for (unsigned char byte : pieces[id]) {
      auto [it, inserted] = children_.try_emplace(static_cast<uint64_t>(node) << 8 | byte,
                                                  static_cast<int32_t>(node_piece_.size()));
      if (inserted) node_piece_.push_back(-1);
      node = it->second;
    }
    if (node_piece_[node] < 0) node_piece_[node] = static_cast<int32_t>(id);  // first one wins
  }
  if (min_score == std::numeric_limits<double>::max()) min_score = 0;
  unknown_score_ = min_score - kUnknownPenalty;
}

int32_t UnigramSegmenter::Child(int32_t node, unsigned char byte) const {
  auto it = children_.find(static_cast<uint64_t>(node) << 8 | byte);
  return it == children_.end() ? -1 : it->second;
}

void UnigramSegmenter::Split(std::string_view text, std::vector<Segment>* segments) const {
  // best[end]: the best segmentation of text[0, end) ends with the segment [start, end).
  struct BestPath {
    double score = 0;
    size_t start = 0;
    int32_t id = kUnknown;
    bool reached = false;
  };
  std::vector<BestPath> best(text.size() + 1);
  best[0].reached = true;
  auto relax = [&best](size_t start, size_t end, int32_t id, double score) {
    BestPath& target = best[end];
    if (!target.reached || score > target.score) target = {score, start, id, true};
  };
  for (size_t start = 0; start < text.size();) {
    size_t char_length = 1;
    hf::DecodeUtf8At(text, start, &char_length);
    const double score_so_far = best[start].score;
    bool covers_char = false;
    int32_t node = 0;
    for (size_t end = start; end < text.size();) {
      node = Child(node, static_cast<unsigned char>(text[end]));
      if (node < 0) break;
      ++end;
      const int32_t id = node_piece_[node];
      if (id < 0) continue;
      relax(start, end, id, score_so_far + scores_[id]);
      covers_char = covers_char || end - start == char_length;
    }
    if (!covers_char) relax(start, start + char_length, kUnknown, score_so_far + unknown_score_);
    start += char_length;
  }
  const size_t first = segments->size();
  for (size_t end = text.size(); end > 0; end = best[end].start) {
    const BestPath& path = best[end];
    if (path.id == kUnknown && segments->size() > first && segments->back().id == kUnknown) {
      segments->back().begin = path.start;  // extends the unknown run to its left
    } else {
      segments->push_back({path.start, end, path.id});
    }
  }
  std::reverse(segments->begin() + static_cast<std::ptrdiff_t>(first), segments->end());
}

}  // namespace vllm
