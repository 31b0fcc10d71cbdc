// Which layers share a KV cache block, as vLLM's hybrid KV cache manager lays them out (uniform
// page size): layers of one attention type (one sliding window; 0 = full attention) form KV cache
// groups of group_size layers, and one block id holds the K/V of every layer of its group, so
// every block has the same size and all groups draw from one pool. Each group has its own block
// table per request, and a sliding group frees the blocks that left its window.
//
//   Gemma 3 1B: 26 layers, every 6th global (5, 11, 17, 23), the other 22 local (W = 512).
//   group_size = min(22, 4) = 4; each type's layers are cut, in layer order, into groups:
//     group 0 (W 512): 0  1  2  3        group 4 (W 512): 19 20 21 22
//     group 1 (W 512): 4  6  7  8        group 5 (W 512): 24 25 -- --   (2 padding places)
//     group 2 (W 512): 9  10 12 13       group 6 (full):   5 11 17 23
//     group 3 (W 512): 14 15 16 18
//   A block of group 6 holds layers 5, 11, 17, 23 at places 0..3 of the block.
//
// group_size is the smallest number of layers of any type, or the largest when that is less than
// 1.25 times the smallest (vLLM: 12 sliding + 13 full layers become 2 groups of 13, not 3 of 12).
// Types are ordered by their first layer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model_config.h"

namespace vllm {

struct KvCacheLayout {
  struct Group {
    int64_t sliding_window = 0;   // W; 0: full attention
    std::vector<int64_t> layers;  // in layer order; fewer than group_size in a padded group
  };
  int64_t group_size = 0;               // layers whose K/V one block holds
  std::vector<Group> groups;            // [num_groups]
  std::vector<int32_t> group_of_layer;  // [num_layers]
  std::vector<int32_t> place_in_group;  // [num_layers]: the layer's index in its group's block

  int64_t num_layers() const { return static_cast<int64_t>(group_of_layer.size()); }
  int64_t num_groups() const { return static_cast<int64_t>(groups.size()); }
  bool has_sliding_group() const;
};

// The groups of layers whose sliding windows are `layer_windows` ([num_layers], 0 = full).
KvCacheLayout KvCacheLayoutFromWindows(std::span<const int64_t> layer_windows);
// The groups of `config`'s layers (ModelConfig::LayerSlidingWindow).
KvCacheLayout KvCacheLayoutOf(const ModelConfig& config);
// One full-attention group of all layers, whatever their windows: every block of a sequence is
// kept (vLLM's --disable-hybrid-kv-cache-manager, and models without sliding layers).
KvCacheLayout SingleGroupKvCacheLayout(int64_t num_layers);
// What a pipeline stage of layers [first_layer, end_layer) keeps of `whole`: the same groups (one
// block id, one table per group as before), each block holding only the stage's layers of its
// group, at places renumbered from 0 in layer order; group_size is the most any group has (at
// least 1); the other layers' places are 0 and never used. It depends on `whole`'s groups only, so
// it is the same whichever stage's layout it is made from.
//   whole: group 0 = layers 0 1 2 3 (places 0..3)   stage of layers [2, 4): places 0 1, size 2
KvCacheLayout StageKvCacheLayout(const KvCacheLayout& whole, int64_t first_layer,
                                 int64_t end_layer);

}  // namespace vllm
