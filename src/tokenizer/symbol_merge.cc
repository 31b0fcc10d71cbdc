#include "tokenizer/symbol_merge.h"

#include <queue>

#include "common/utf8.h"

namespace vllm {
namespace {

// A piece of the working text, linked to its neighbours (-1 at the ends).
struct Symbol {
  int prev;
  int next;
  size_t start;
  size_t length;  // 0 once merged into its left neighbour
};

struct Candidate {
  double priority;
  int left;
  int right;
  size_t length;  // merged length, to detect entries made stale by other merges
  bool operator<(const Candidate& other) const {
    return priority < other.priority || (priority == other.priority && left > other.left);
  }
};

}  // namespace

std::vector<std::string_view> MergeSymbols(
    std::string_view text,
    const std::function<std::optional<double>(std::string_view, std::string_view)>& priority_of) {
  std::vector<Symbol> symbols;
  size_t offset = 0;
  for (std::string_view character : SplitUtf8Characters(text)) {
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, index + 1, offset, character.size()});
    offset += character.size();
  }
  if (symbols.empty()) return {};
  symbols.back().next = -1;

  auto piece = [&](int i) { return text.substr(symbols[i].start, symbols[i].length); };
  std::priority_queue<Candidate> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    if (auto priority = priority_of(piece(left), piece(right))) {
      queue.push({*priority, left, right, symbols[left].length + symbols[right].length});
    }
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    const Candidate candidate = queue.top();
    queue.pop();
    Symbol& left = symbols[candidate.left];
    Symbol& right = symbols[candidate.right];
    if (left.length == 0 || right.length == 0 || left.next != candidate.right ||
        left.length + right.length != candidate.length) {
      continue;  // stale
    }
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = candidate.left;
    try_add(left.prev, candidate.left);
    try_add(candidate.left, left.next);
  }
  std::vector<std::string_view> pieces;
  for (int i = 0; i >= 0; i = symbols[i].next) pieces.push_back(piece(i));
  return pieces;
}

}  // namespace vllm
