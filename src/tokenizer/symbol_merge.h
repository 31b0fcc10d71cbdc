// The merge loop shared by SentencePiece BPE and byte-level BPE: text starts as its UTF-8
// characters, and the adjacent pair with the highest priority (leftmost on ties) is merged until
// no pair has one. A priority queue over a linked list of symbols keeps it O(n log n).
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace vllm {

// priority_of(left, right): the priority of merging two adjacent pieces, or nullopt if they
// cannot merge. Returns the final pieces in order.
std::vector<std::string_view> MergeSymbols(
    std::string_view text,
    const std::function<std::optional<double>(std::string_view left, std::string_view right)>&
        priority_of);

}  // namespace vllm
