// LinearWeight and the Linear entry point. A weight is its type's table entry plus its own copy of
// the bytes on huge pages: its packed form, built at Create when the type has one for this CPU, or
// the rows as stored. Linear prepares the activations once per call in the
// format the type's dot products consume (from x's columns in the weight's input order, where it
// has one: gathered row by row as they are converted), then deals W's rows in tiles to the pool's
// threads.

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/huge_page_allocator.h"
#include "common/mapped_file.h"
#include "kernels/linear_internal.h"
#include "kernels/ops.h"

namespace vllm::kernels {
namespace {

// Rows of W per work item of the in-place kernels: small enough to spread over threads, large
// enough to amortize.
constexpr int64_t kRowsPerTile = 16;
// Row ranges per thread that the threads claim in turn (ThreadPool::ParallelForChunks) on the
// unpacked paths; packed weights deal their items in guided chunks (ParallelForGuided).
constexpr int kChunksPerThread = 8;
// Row groups of a packed form per work item.
constexpr int64_t kGroupsPerWorkItem = 2;

bool UsesPackedForm(const TypeTraits& traits, int64_t rows, int64_t cols) {
  const PackedForm& form = traits.packed;
  return form.rows_per_group > 0 && PackedIsa(form) != Isa::kScalar &&
         rows % form.rows_per_group == 0 && cols % form.cols_per_block == 0;
}

// The one LinearWeight implementation.
class TableLinearWeight : public LinearWeight {
 public:
  // The weight keeps its own copy of view.data on huge pages, packed or as stored; with
  // `release_source_pages` (view.data in the file mapping, Create) it then lets the source go.
  TableLinearWeight(const WeightView& view, bool release_source_pages)
      : view_(view), packed_(UsesPackedForm(*view.traits, view.rows, view.cols)) {
    const int64_t source_bytes = view.rows * view.row_bytes;
    if (packed_) {
      bytes_.resize(view.traits->packed.packed_bytes(view.rows, view.cols));
      view.traits->packed.pack(view_, bytes_.data());
      view_.data = nullptr;
    } else {
      bytes_.assign(view.data, view.data + source_bytes);
      view_.data = bytes_.data();
    }
    if (release_source_pages) ReleaseMappedPages(view.data, source_bytes);
  }
  GgmlType type() const override { return view_.traits->layout.type; }
  int64_t rows() const override { return view_.rows; }
  int64_t cols() const override { return view_.cols; }
  int64_t resident_bytes() const override { return static_cast<int64_t>(bytes_.size()); }
  const std::vector<int32_t>& input_order() const override { return input_order_; }
  void set_input_order(std::vector<int32_t> order) { input_order_ = std::move(order); }

  void Apply(const float* x, int64_t m, float* y, ThreadPool& pool) const {
    if (m <= 0) return;
    if (!packed_) {
      LinearWithIsa(BestIsa(), view_, x, m, y, pool, input_order_data());
      return;
    }
    const PreparedActivations prepared = Prepare(x, m, pool);
    pool.ParallelForGuided(num_work_items(),
                           [&](int64_t begin, int64_t end) { Run(prepared, begin, end, y); });
  }

  // The work of one call split for LinearBatch: the activations in the form the kernels read,
  // then num_work_items() independent items (pairs of row groups of the packed form, or row
  // tiles).
  PreparedActivations Prepare(const float* x, int64_t m, ThreadPool& pool) const {
    const TypeTraits& traits = *view_.traits;
    PreparedActivations prepared =
        PrepareActivations(packed_ ? PackedIsa(traits.packed) : BestIsa(), traits.activation, x, m,
                           view_.cols, pool, input_order_data());
    // prepared.f32 may point into prepared.ordered_x, whose buffer a move keeps (and a vector of
    // PreparedActivations moves them as it grows: they never copy).
    static_assert(std::is_nothrow_move_constructible_v<PreparedActivations>);
    if (packed_ && packed_kernels().prepare_terms != nullptr) {
      packed_kernels().prepare_terms(prepared);
    }
    return prepared;
  }
  // GatedLinear (this weight from CreateGatedPair, or CreateFused's {gate, up}). Turns of
  // kGatedRowsPerTurn that are whole work items go to the threads one at a time, each product
  // followed by its activation over every token; otherwise the whole product comes first.
  void ApplyGated(const float* x, int64_t m, GateActivation act, float* out,
                  ThreadPool& pool) const {
    if (m <= 0) return;
    const int64_t ffn = view_.rows / 2;  // out's row length
    // CreateFused's {gate, up} is one turn.
    const int64_t rows_per_turn = rows_per_turn_ > 0 ? rows_per_turn_ : ffn;
    const int64_t num_turns = ffn / rows_per_turn;
    // gate and up, [m, 2 ffn] in turns; written whole before it is read.
    const auto y = std::make_unique_for_overwrite<float[]>(m * view_.rows);
    // out = act(gate) · up for turns [first_turn, end_turn) of tokens [first_token, end_token).
    auto activate = [&](int64_t first_token, int64_t end_token, int64_t first_turn,
                        int64_t end_turn) {
      for (int64_t t = first_token; t < end_token; ++t) {
        for (int64_t turn = first_turn; turn < end_turn; ++turn) {
          const float* gate = y.get() + t * view_.rows + 2 * turn * rows_per_turn;
          GateTimesUp(act, gate, gate + rows_per_turn, rows_per_turn,
                      out + t * ffn + turn * rows_per_turn);
        }
      }
    };
    const int64_t turn_rows = 2 * rows_per_turn;  // gate and up
    if (rows_per_turn != kGatedRowsPerTurn || turn_rows % rows_per_work_item() != 0) {
      Apply(x, m, y.get(), pool);
      pool.ParallelFor(m, [&](int64_t begin, int64_t end) { activate(begin, end, 0, num_turns); });
      return;
    }
    const int64_t items_per_turn = turn_rows / rows_per_work_item();
    const PreparedActivations prepared = Prepare(x, m, pool);
    pool.ParallelForGuided(num_turns, [&](int64_t begin, int64_t end) {
      for (int64_t turn = begin; turn < end; ++turn) {
        Run(prepared, turn * items_per_turn, (turn + 1) * items_per_turn, y.get());
        activate(0, m, turn, turn + 1);
      }
    });
  }
  void set_rows_per_turn(int64_t rows) { rows_per_turn_ = rows; }

  // A packed form's items are pairs of its row groups, which its kernels run side by side.
  int64_t rows_per_work_item() const {
    return packed_ ? kGroupsPerWorkItem * view_.traits->packed.rows_per_group : kRowsPerTile;
  }
  int64_t num_work_items() const {
    return (view_.rows + rows_per_work_item() - 1) / rows_per_work_item();
  }
  // y's rows of work items [begin, end).
  void Run(const PreparedActivations& prepared, int64_t begin, int64_t end, float* y) const {
    const int64_t row_begin = begin * rows_per_work_item();
    const int64_t row_end = std::min(end * rows_per_work_item(), view_.rows);
    if (!packed_) {
      view_.traits->rows[static_cast<int>(BestIsa())](view_, prepared, row_begin, row_end, y);
      return;
    }
    const PackedWeightView packed{view_.traits, view_.rows, view_.cols, bytes_.data()};
    packed_kernels().rows(packed, prepared, row_begin, row_end, y);
  }

 private:
  // The kernels of the packed form on this CPU (where packed_).
  const PackedKernels& packed_kernels() const {
    const PackedForm& form = view_.traits->packed;
    return form.kernels[static_cast<int>(PackedIsa(form))];
  }

  // The input order as PrepareActivations takes it (nullptr: the identity).
  const int32_t* input_order_data() const {
    return input_order_.empty() ? nullptr : input_order_.data();
  }

  WeightView view_;  // data: bytes_'s rows when not packed, else nullptr
  bool packed_;      // whether bytes_ holds the type's packed form for this CPU
  std::vector<uint8_t, HugePageAllocator<uint8_t>> bytes_;  // the packed form, or the rows
  int64_t rows_per_turn_ = 0;         // of gate (then of up) in CreateGatedPair's layout; else 0
  std::vector<int32_t> input_order_;  // [cols] (WithInputOrder), or empty: the identity
};

Expected<WeightView> CheckedView(GgmlType type, const void* data, int64_t rows, int64_t cols) {
  const TypeTraits* traits = FindTypeTraits(type);
  if (traits == nullptr) {
    return Error{"unsupported weight type " + GgmlTypeName(static_cast<uint32_t>(type))};
  }
  if (rows <= 0 || cols <= 0 || cols % traits->layout.block_size != 0) {
    return Error{"weight shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                 "] does not fit " + traits->layout.name + " rows"};
  }
  return WeightView{traits, static_cast<const uint8_t*>(data), rows, cols,
                    RowBytes(traits->layout, cols)};
}

// A weight over rows the caller built (`bytes`, read during the call only).
Expected<std::unique_ptr<TableLinearWeight>> OwnedTable(GgmlType type,
                                                        const std::vector<uint8_t>& bytes,
                                                        int64_t rows, int64_t cols) {
  auto view = CheckedView(type, bytes.data(), rows, cols);
  if (!view) return Error{view.error()};
  if (static_cast<int64_t>(bytes.size()) != rows * view->row_bytes) {
    return Error{"weight bytes do not hold [" + std::to_string(rows) + ", " + std::to_string(cols) +
                 "] rows"};
  }
  return std::make_unique<TableLinearWeight>(*view, /*release_source_pages=*/false);
}

}  // namespace

Expected<std::unique_ptr<LinearWeight>> LinearWeight::Create(GgmlType type, const void* data,
                                                             int64_t rows, int64_t cols) {
  auto view = CheckedView(type, data, rows, cols);
  if (!view) return Error{view.error()};
  return std::unique_ptr<LinearWeight>(new TableLinearWeight(*view, /*release_source_pages=*/true));
}

Expected<std::unique_ptr<LinearWeight>> LinearWeight::CreateOwned(GgmlType type,
                                                                  std::vector<uint8_t> bytes,
                                                                  int64_t rows, int64_t cols) {
  auto weight = OwnedTable(type, bytes, rows, cols);
  if (!weight) return Error{weight.error()};
  return std::unique_ptr<LinearWeight>(std::move(*weight));
}

Expected<std::unique_ptr<LinearWeight>> LinearWeight::CreateFused(GgmlType type,
                                                                  const std::vector<Part>& parts,
                                                                  int64_t cols) {
  int64_t total_rows = 0;
  for (const Part& part : parts) {
    auto view = CheckedView(type, part.data, part.rows, cols);
    if (!view) return Error{view.error()};
    total_rows += part.rows;
  }
  const int64_t row_bytes = RowBytes(FindTypeTraits(type)->layout, cols);
  std::vector<uint8_t> bytes;
  bytes.reserve(total_rows * row_bytes);
  for (const Part& part : parts) {
    const auto* data = static_cast<const uint8_t*>(part.data);
    bytes.insert(bytes.end(), data, data + part.rows * row_bytes);
    ReleaseMappedPages(data, part.rows * row_bytes);
  }
  return CreateOwned(type, std::move(bytes), total_rows, cols);
}

Expected<std::unique_ptr<LinearWeight>> LinearWeight::CreateGatedPair(GgmlType type,
                                                                      const Part& gate,
                                                                      const Part& up,
                                                                      int64_t cols) {
  if (gate.rows != up.rows) return Error{"gate and up weights have different numbers of rows"};
  for (const Part& part : {gate, up}) {
    auto view = CheckedView(type, part.data, part.rows, cols);
    if (!view) return Error{view.error()};
  }
  const int64_t rows_per_turn = gate.rows % kGatedRowsPerTurn == 0 ? kGatedRowsPerTurn : gate.rows;
  const int64_t row_bytes = RowBytes(FindTypeTraits(type)->layout, cols);
  const int64_t turn_bytes = rows_per_turn * row_bytes;
  std::vector<uint8_t> bytes;
  bytes.reserve(2 * gate.rows * row_bytes);
  for (int64_t offset = 0; offset < gate.rows * row_bytes; offset += turn_bytes) {
    for (const Part& part : {gate, up}) {
      const auto* turn = static_cast<const uint8_t*>(part.data) + offset;
      bytes.insert(bytes.end(), turn, turn + turn_bytes);
    }
  }
  for (const Part& part : {gate, up}) {
    ReleaseMappedPages(static_cast<const uint8_t*>(part.data), part.rows * row_bytes);
  }
  auto weight = OwnedTable(type, bytes, 2 * gate.rows, cols);
  if (!weight) return Error{weight.error()};
  (*weight)->set_rows_per_turn(rows_per_turn);
  return std::unique_ptr<LinearWeight>(std::move(*weight));
}

Expected<std::unique_ptr<LinearWeight>> LinearWeight::WithInputOrder(
    std::unique_ptr<LinearWeight> weight, std::vector<int32_t> input_order) {
  const int64_t cols = weight->cols();
  if (static_cast<int64_t>(input_order.size()) != cols) {
    return Error{"input order has " + std::to_string(input_order.size()) + " columns, the weight " +
                 std::to_string(cols)};
  }
  std::vector<bool> seen(cols, false);
  bool identity = true;
  for (int64_t j = 0; j < cols; ++j) {
    const int32_t column = input_order[j];
    if (column < 0 || column >= cols) {
      return Error{"input order entry " + std::to_string(j) + " is column " +
                   std::to_string(column) + ", outside [0, " + std::to_string(cols) + ")"};
    }
    if (seen[column]) {
      return Error{"input order repeats column " + std::to_string(column) + " (at entry " +
                   std::to_string(j) + ")"};
    }
    seen[column] = true;
    identity = identity && column == j;
  }
  // TableLinearWeight is the only implementation (LinearWeight::Create / CreateOwned).
  auto& table = static_cast<TableLinearWeight&>(*weight);
  table.set_input_order(identity ? std::vector<int32_t>() : std::move(input_order));
  return weight;
}

void LinearWithIsa(Isa isa, const WeightView& w, const float* x, int64_t m, float* y,
                   ThreadPool& pool, const int32_t* input_order) {
  if (m <= 0) return;
  const PreparedActivations prepared =
      PrepareActivations(isa, w.traits->activation, x, m, w.cols, pool, input_order);
  const RowsKernel rows_kernel = w.traits->rows[static_cast<int>(isa)];
  const int64_t num_tiles = (w.rows + kRowsPerTile - 1) / kRowsPerTile;
  pool.ParallelForChunks(num_tiles, kChunksPerThread, [&](int64_t tile_begin, int64_t tile_end) {
    rows_kernel(w, prepared, tile_begin * kRowsPerTile, std::min(tile_end * kRowsPerTile, w.rows),
                y);
  });
}

void Linear(const LinearWeight& w, const float* x, int64_t m, float* y, ThreadPool& pool) {
  // TableLinearWeight is the only implementation (LinearWeight::Create / CreateOwned).
  static_cast<const TableLinearWeight&>(w).Apply(x, m, y, pool);
}

void GatedLinear(const LinearWeight& w, const float* x, int64_t m, GateActivation act, float* out,
                 ThreadPool& pool) {
  static_cast<const TableLinearWeight&>(w).ApplyGated(x, m, act, out, pool);
}

void LinearBatch(std::span<const LinearJob> jobs, ThreadPool& pool) {
  std::vector<const TableLinearWeight*> weights;
  std::vector<PreparedActivations> prepared;
  std::vector<int64_t> first_item = {0};  // [jobs + 1]: each job's first item in the batch
  for (const LinearJob& job : jobs) {
    if (job.m <= 0) continue;
    weights.push_back(static_cast<const TableLinearWeight*>(job.weight));
    prepared.push_back(weights.back()->Prepare(job.x, job.m, pool));
    first_item.push_back(first_item.back() + weights.back()->num_work_items());
  }
  std::vector<float*> outputs;
  for (const LinearJob& job : jobs) {
    if (job.m > 0) outputs.push_back(job.y);
  }
  pool.ParallelForGuided(first_item.back(), [&](int64_t begin, int64_t end) {
    // The jobs whose items overlap [begin, end), each over its share.
    size_t j =
        std::upper_bound(first_item.begin(), first_item.end(), begin) - first_item.begin() - 1;
    for (; j < weights.size() && first_item[j] < end; ++j) {
      const int64_t from = std::max(begin, first_item[j]) - first_item[j];
      const int64_t to = std::min(end, first_item[j + 1]) - first_item[j];
      weights[j]->Run(prepared[j], from, to, outputs[j]);
    }
  });
}

void DequantizeRow(GgmlType type, const void* row, int64_t n, float* out) {
  FindTypeTraits(type)->dequantize_row(row, n, out);
}

void QuantizeRow(GgmlType type, const float* x, int64_t n, void* out) {
  FindTypeTraits(type)->quantize_row(x, n, out);
}

}  // namespace vllm::kernels
