// LinearWeight and the Linear entry point: activations are prepared once per call, then W's rows
// are split into tiles dealt to the pool's threads; each ISA path computes whole tiles.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "kernels/linear_internal.h"
#include "kernels/ops.h"

namespace vllm::kernels {
namespace {

// Rows of W per work item: small enough to spread over threads, large enough to amortize.
constexpr int64_t kRowsPerTile = 16;

// Reads the weight where it lies (the mmap'd file); owns nothing.
class InPlaceLinearWeight : public LinearWeight {
 public:
  explicit InPlaceLinearWeight(const WeightView& view) : view_(view) {}
  GgmlType type() const override { return view_.type; }
  int64_t rows() const override { return view_.rows; }
  int64_t cols() const override { return view_.cols; }
  const WeightView& view() const { return view_; }

 private:
  WeightView view_;
};

// Tells the kernel the source bytes will not be read again soon: pages of a file mapping leave
// memory (they read back from the file if touched). Contents never change.
void ReleaseSourcePages(const uint8_t* data, int64_t size) {
#ifdef MADV_PAGEOUT
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);
#else
  (void)data;
  (void)size;
#endif
}

// Q8_0 / Q4_0 / BF16 packed for the AVX-512 kernel; the source bytes are read once, at Create.
class PackedLinearWeight : public LinearWeight {
 public:
  explicit PackedLinearWeight(const WeightView& source)
      : quants_(source.rows / kPackedRowsPerGroup * source.cols / kQuantBlockSize *
                PackedBytesPerGroupBlock(source.type)),
        scales_(source.type == GgmlType::kBF16 ? 0 : source.rows * source.cols / kQuantBlockSize) {
    PackQuantized(source, quants_.data(), scales_.data());
    view_ = {source.type, source.rows, source.cols, quants_.data(), scales_.data()};
    ReleaseSourcePages(source.data, source.rows * source.row_bytes);
  }
  GgmlType type() const override { return view_.type; }
  int64_t rows() const override { return view_.rows; }
  int64_t cols() const override { return view_.cols; }
  const PackedWeightView& view() const { return view_; }

 private:
  std::vector<uint8_t> quants_;
  std::vector<uint16_t> scales_;
  PackedWeightView view_;
};

using RowsFn = void (*)(const WeightView&, const PreparedActivations&, int64_t, int64_t, float*);

RowsFn RowsFnFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return LinearRowsAvx512;
    case Isa::kAvx2:
      return LinearRowsAvx2;
    case Isa::kScalar:
      break;
  }
  return LinearRowsScalar;
}

}  // namespace

namespace {

// A weight built over bytes it owns; forwards to the weight built on them.
class OwnedLinearWeight : public LinearWeight {
 public:
  OwnedLinearWeight(std::vector<uint8_t> bytes, std::unique_ptr<LinearWeight> inner)
      : bytes_(std::move(bytes)), inner_(std::move(inner)) {}
  GgmlType type() const override { return inner_->type(); }
  int64_t rows() const override { return inner_->rows(); }
  int64_t cols() const override { return inner_->cols(); }
  const LinearWeight& inner() const { return *inner_; }

 private:
  std::vector<uint8_t> bytes_;
  std::unique_ptr<LinearWeight> inner_;
};

}  // namespace

Expected<std::unique_ptr<LinearWeight>> LinearWeight::CreateOwned(GgmlType type,
                                                                  std::vector<uint8_t> bytes,
                                                                  int64_t rows, int64_t cols) {
  auto traits = GetSupportedTypeTraits(type);
  if (!traits || rows <= 0 || cols <= 0 || cols % traits->block_size != 0 ||
      static_cast<int64_t>(bytes.size()) != rows * RowBytes(*traits, cols)) {
    return Error{"weight bytes do not hold [" + std::to_string(rows) + ", " + std::to_string(cols) +
                 "] rows"};
  }
  auto inner = Create(type, bytes.data(), rows, cols);
  if (!inner) return Error{inner.error()};
  return std::unique_ptr<LinearWeight>(new OwnedLinearWeight(std::move(bytes), std::move(*inner)));
}

Expected<std::unique_ptr<LinearWeight>> LinearWeight::Create(GgmlType type, const void* data,
                                                             int64_t rows, int64_t cols) {
  auto traits = GetSupportedTypeTraits(type);
  if (!traits) return Error{"unsupported weight type " + GgmlTypeName(static_cast<uint32_t>(type))};
  if (rows <= 0 || cols <= 0 || cols % traits->block_size != 0) {
    return Error{"weight shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                 "] does not fit " + traits->name + " rows"};
  }
  WeightView view{type, static_cast<const uint8_t*>(data), rows, cols, RowBytes(*traits, cols)};
  const bool packable =
      type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0 || type == GgmlType::kBF16;
  if (packable && rows % kPackedRowsPerGroup == 0 && cols % kQuantBlockSize == 0 &&
      BestIsa() == Isa::kAvx512) {
    return std::unique_ptr<LinearWeight>(new PackedLinearWeight(view));
  }
  return std::unique_ptr<LinearWeight>(new InPlaceLinearWeight(view));
}

void LinearWithIsa(Isa isa, const WeightView& w, const float* x, int64_t m, float* y,
                   ThreadPool& pool) {
  if (m <= 0) return;
  const PreparedActivations prepared = PrepareActivations(isa, w.type, x, m, w.cols, pool);
  const RowsFn rows_fn = RowsFnFor(isa);
  const int64_t num_tiles = (w.rows + kRowsPerTile - 1) / kRowsPerTile;
  pool.ParallelFor(num_tiles, [&](int64_t tile_begin, int64_t tile_end) {
    rows_fn(w, prepared, tile_begin * kRowsPerTile, std::min(tile_end * kRowsPerTile, w.rows), y);
  });
}

void Linear(const LinearWeight& w, const float* x, int64_t m, float* y, ThreadPool& pool) {
  if (const auto* owned = dynamic_cast<const OwnedLinearWeight*>(&w)) {
    Linear(owned->inner(), x, m, y, pool);
    return;
  }
  if (const auto* packed = dynamic_cast<const PackedLinearWeight*>(&w)) {
    if (m <= 0) return;
    const PackedWeightView& view = packed->view();
    const PreparedActivations prepared =
        PrepareActivations(Isa::kAvx512, view.type, x, m, view.cols, pool);
    const int64_t num_groups = view.rows / kPackedRowsPerGroup;
    pool.ParallelFor(num_groups, [&](int64_t group_begin, int64_t group_end) {
      LinearRowsPackedAvx512(view, prepared, group_begin * kPackedRowsPerGroup,
                             group_end * kPackedRowsPerGroup, y);
    });
    return;
  }
  LinearWithIsa(BestIsa(), static_cast<const InPlaceLinearWeight&>(w).view(), x, m, y, pool);
}

}  // namespace vllm::kernels
