// Internal to the AttendSpan paths: the cache lines of AttentionSpan::next handed to the cache
// hierarchy a few at a time, between a span's products. A burst of hundreds of prefetches is
// mostly dropped (Zen 5: after 256 in a row, a 16 KiB span still read in 55-80 % of its time from
// memory; in batches of 4 to 32 with a little work between, in 16-22 %), so a path spreads them
// over its inner loops: Issue(1) per step, IssueRest where it has no steps left.
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace vllm::kernels {

class KvLinePrefetcher {
 public:
  // Values first (a span's values are read first, as it lays out V^T), then keys, slot by slot;
  // a slot's rows as the bytes from its first row to the end of its last.
  KvLinePrefetcher(const KvPrefetch& rows, int64_t head_dim) {
    for (const KvRows* tiles : {rows.values, rows.keys}) {
      for (int slot = 0; slot < kAttentionSpanTiles; ++slot) {
        if (rows.num_keys[slot] == 0) continue;
        const KvRows& tile = tiles[slot];
        const auto first = reinterpret_cast<uintptr_t>(tile.data);
        begin_[num_ranges_] = first / kLineBytes * kLineBytes;
        end_[num_ranges_] = first + (rows.num_keys[slot] - 1) * tile.row_stride_bytes +
                            head_dim * KvValueBytes(tile.dtype);
        num_lines_ += static_cast<int>((end_[num_ranges_] - begin_[num_ranges_] + kLineBytes - 1) /
                                       kLineBytes);
        ++num_ranges_;
      }
    }
    if (num_ranges_ > 0) line_ = begin_[0];
  }

  int num_lines() const { return num_lines_; }  // in all
  // The line the next Issue asks for first; 0 once every line was asked for.
  uintptr_t next_line() const { return range_ < num_ranges_ ? line_ : 0; }

  // Asks for the next num_lines lines (fewer where none are left).
  void Issue(int num_lines) {
    for (; num_lines > 0 && range_ < num_ranges_; --num_lines) {
      __builtin_prefetch(reinterpret_cast<const void*>(line_));
      line_ += kLineBytes;
      if (line_ >= end_[range_] && ++range_ < num_ranges_) line_ = begin_[range_];
    }
  }
  void IssueRest() { Issue(INT32_MAX); }

 private:
  static constexpr uintptr_t kLineBytes = 64;
  uintptr_t begin_[2 * kAttentionSpanTiles], end_[2 * kAttentionSpanTiles];
  int num_ranges_ = 0, range_ = 0, num_lines_ = 0;
  uintptr_t line_ = 0;  // the next line to ask for, in range_
};

}  // namespace vllm::kernels
