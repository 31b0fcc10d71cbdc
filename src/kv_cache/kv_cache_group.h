// KV cache groups, as in vLLM's hybrid KV cache manager: a group is a set of layers of one
// attention type sharing one block table per request; all groups draw blocks from one BlockPool.
// A full-attention group keeps every block of a request. A sliding-window group (window W: the
// token at position p attends to positions [p - W + 1, p]) keeps only the blocks that a token
// still to be computed can see, and holds the null block in the other entries, so that
// block_table[pos / block_size] stays valid for every position any such token sees:
//
//   block_size 4, W = 6, next token to compute at p = 13: it sees positions [8, 13]
//   positions   0  1  2  3 | 4  5  6  7 | 8  9 10 11 | 12 13
//   table      [  null     |   null     |    b7      |  b2  ]
//                                         ^ FirstVisibleBlock = 8 / 4 = 2
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace vllm {

struct KvCacheGroupSpec {
  int64_t sliding_window = 0;  // W; 0: full attention
  bool is_sliding() const { return sliding_window > 0; }
};

// The first block that the token at `position` attends to: 0 for full attention, else the block
// holding max(0, position - W + 1). Every token at or after `position` sees none of the blocks
// before it.
int64_t FirstVisibleBlock(const KvCacheGroupSpec& spec, int64_t block_size, int64_t position);

// The block caching block `block` of the prompt (the block's own tokens and its whole prefix) for
// group `group`, or nullopt.
using CachedBlockLookup = std::function<std::optional<int32_t>(int32_t group, int64_t block)>;

// The longest prefix-cache hit of at most `max_blocks` blocks that every group can serve: the
// largest n such that in each group every block of [FirstVisibleBlock(n * block_size), n) is
// cached, those being the blocks that the first token to compute (position n * block_size) sees
// besides itself. Returns one table of n entries per group; a sliding group's holds `null_block`
// before its visible blocks.
std::vector<std::vector<int32_t>> FindLongestCacheHit(std::span<const KvCacheGroupSpec> groups,
                                                      int64_t block_size, int64_t max_blocks,
                                                      int32_t null_block,
                                                      const CachedBlockLookup& lookup);

}  // namespace vllm
