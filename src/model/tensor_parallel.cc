#include "model/tensor_parallel.h"

#include <algorithm>
#include <cstring>

#include "common/mapped_file.h"
#include "model/architecture.h"

namespace vllm {
namespace {

std::string Number(int64_t value) { return std::to_string(value); }

// The KV heads rank `rank` of `size` holds: [first, first + count).
struct KvHeads {
  int64_t first, count;
};
KvHeads KvHeadsOf(int64_t num_kv_heads, int rank, int size) {
  if (num_kv_heads >= size) {
    const int64_t count = num_kv_heads / size;
    return {rank * count, count};
  }
  return {rank * num_kv_heads / size, 1};  // replicated: the one this rank's query heads read
}

}  // namespace

VocabShard VocabShardOf(int64_t vocab_size, int rank, int size) {
  const int64_t padded = (vocab_size + size - 1) / size;
  const int64_t begin = std::min(vocab_size, rank * padded);
  return {begin, std::min(padded, vocab_size - begin), padded};
}

Expected<ModelConfig> TensorParallelConfig(const ModelConfig& whole, int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size) {
    return Error{"tensor parallel: rank " + Number(rank) + " of " + Number(size) + " ranks"};
  }
  const std::string tp = " must be divisible by tensor parallel size (" + Number(size) + ")";
  if (whole.num_heads % size != 0) {
    return Error{"Total number of attention heads (" + Number(whole.num_heads) + ")" + tp};
  }
  if (whole.num_kv_heads % size != 0 && size % whole.num_kv_heads != 0) {
    return Error{"Total number of KV heads (" + Number(whole.num_kv_heads) +
                 ") and tensor parallel size (" + Number(size) +
                 ") must divide one another (KV heads are split or replicated)"};
  }
  if (whole.num_experts > 0 && whole.expert_intermediate_size % size != 0) {
    return Error{"Expert intermediate size (" + Number(whole.expert_intermediate_size) + ")" + tp};
  }
  if (whole.num_experts == 0 && whole.intermediate_size % size != 0) {
    return Error{"Intermediate size (" + Number(whole.intermediate_size) + ")" + tp};
  }
  if (VocabShardOf(whole.vocab_size, size - 1, size).num_rows <= 0) {
    return Error{"a vocabulary of " + Number(whole.vocab_size) +
                 " tokens leaves tensor parallel rank " + Number(size - 1) + " of " + Number(size) +
                 " no rows"};
  }
  ModelConfig local = whole;
  local.num_heads = whole.num_heads / size;
  local.num_kv_heads = KvHeadsOf(whole.num_kv_heads, rank, size).count;
  if (whole.intermediate_size % size == 0) local.intermediate_size /= size;
  if (whole.expert_intermediate_size % size == 0) local.expert_intermediate_size /= size;
  return local;
}

TensorParallelSource::TensorParallelSource(const TensorSource& whole, const ModelConfig& config,
                                           int rank, int size, ModelConfig local)
    : whole_(whole),
      whole_config_(config),
      rank_(rank),
      size_(size),
      local_(std::move(local)),
      vocab_(VocabShardOf(config.vocab_size, rank, size)) {}

Expected<std::unique_ptr<TensorParallelSource>> TensorParallelSource::Create(
    const TensorSource& whole, const ModelConfig& config, int rank, int size) {
  auto local = TensorParallelConfig(config, rank, size);
  if (!local) return Error{local.error()};
  std::unique_ptr<TensorParallelSource> source(
      new TensorParallelSource(whole, config, rank, size, std::move(*local)));
  // Every column slice: whole blocks, no input order. Experts are stored stacked or one by one.
  std::vector<std::string> column_sliced;
  for (int64_t l = 0; l < config.num_layers; ++l) {
    const std::string prefix = "blk." + Number(l) + ".";
    for (const char* name : {"attn_output.weight", "ffn_down.weight", "ffn_down_exps.weight"}) {
      column_sliced.push_back(prefix + name);
    }
    for (int64_t e = 0; e < config.num_experts; ++e) {
      column_sliced.push_back(prefix + "ffn_down." + Number(e) + ".weight");
    }
  }
  for (const std::string& name : column_sliced) {
    const GgufTensor* tensor = whole.Find(name);
    if (tensor == nullptr) continue;
    const Slicing slicing = source->SlicingOf(name, *tensor);
    auto traits = GetSupportedTypeTraits(tensor->type);
    const std::string type_name = GgmlTypeName(static_cast<uint32_t>(tensor->type));
    if (!traits) return Error{"tensor '" + name + "' has unsupported type " + type_name};
    if (slicing.col_count % traits->block_size != 0) {
      std::string upper = type_name;
      std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
      return Error{"tensor parallel size " + Number(size) + ": " + name + " has " +
                   Number(slicing.col_count) + " input columns per rank, not a multiple of " +
                   upper + "'s " + Number(traits->block_size) + "-wide blocks"};
    }
    const std::vector<int32_t>* order = whole.InputOrder(name);
    if (order != nullptr && !order->empty()) {
      return Error{"tensor parallel: " + name +
                   " has an input order (GPTQ desc_act / actorder), whose columns cannot be "
                   "split across ranks yet"};
    }
  }
  return source;
}

TensorParallelSource::Slicing TensorParallelSource::SlicingOf(const std::string& name,
                                                              const GgufTensor& tensor) const {
  const auto rows = [](std::vector<RowRange> ranges) {
    return Slicing{.kind = Slicing::kRows, .rows = std::move(ranges)};
  };
  const auto columns = [](int64_t begin, int64_t count) {
    return Slicing{.kind = Slicing::kColumns, .col_begin = begin, .col_count = count};
  };
  if (name == "token_embd.weight" || name == "output.weight") {
    return rows({{vocab_.begin, vocab_.num_rows}});
  }
  int64_t layer = -1, expert = -1;
  const auto is = [&](const char* pattern) {
    return MatchTensorName(pattern, name, &layer, &expert);
  };
  const int64_t head_dim = whole_config_.head_dim;
  const int64_t q_rows = whole_config_.num_heads * head_dim;
  const int64_t kv_rows = whole_config_.num_kv_heads * head_dim;
  const RowRange q{rank_ * local_.num_heads * head_dim, local_.num_heads * head_dim};
  const KvHeads kv_heads = KvHeadsOf(whole_config_.num_kv_heads, rank_, size_);
  const RowRange kv{kv_heads.first * head_dim, kv_heads.count * head_dim};
  if (is("blk.{L}.attn_q.weight") || is("blk.{L}.attn_q.bias")) return rows({q});
  if (is("blk.{L}.attn_k.weight") || is("blk.{L}.attn_k.bias") || is("blk.{L}.attn_v.weight") ||
      is("blk.{L}.attn_v.bias")) {
    return rows({kv});
  }
  if (is("blk.{L}.attn_qkv.weight") || is("blk.{L}.attn_qkv.bias")) {
    return rows({q, {q_rows + kv.begin, kv.count}, {q_rows + kv_rows + kv.begin, kv.count}});
  }
  if (is("blk.{L}.attn_output.weight")) return columns(q.begin, q.count);
  if (is("blk.{L}.attn_sinks.weight")) {
    return rows({{rank_ * local_.num_heads, local_.num_heads}});
  }
  const int64_t ffn = whole_config_.intermediate_size, local_ffn = local_.intermediate_size;
  if (is("blk.{L}.ffn_gate.weight")) return rows({{rank_ * local_ffn, local_ffn}});
  if (is("blk.{L}.ffn_up.weight")) {
    // Phi-3: gate rows then up rows in ffn_up, no ffn_gate.
    const bool fused = tensor.shape.size() == 2 && tensor.shape[1] == 2 * ffn &&
                       whole_.Find("blk." + Number(layer) + ".ffn_gate.weight") == nullptr;
    if (fused) return rows({{rank_ * local_ffn, local_ffn}, {ffn + rank_ * local_ffn, local_ffn}});
    return rows({{rank_ * local_ffn, local_ffn}});
  }
  if (is("blk.{L}.ffn_down.weight")) return columns(rank_ * local_ffn, local_ffn);
  const int64_t expert_ffn = local_.expert_intermediate_size;
  const RowRange expert_rows{rank_ * expert_ffn, expert_ffn};
  if (is("blk.{L}.ffn_gate_exps.weight") || is("blk.{L}.ffn_up_exps.weight") ||
      is("blk.{L}.ffn_gate.{E}.weight") || is("blk.{L}.ffn_up.{E}.weight")) {
    return rows({expert_rows});
  }
  // Expert biases: [num_experts, expert_ffn] rows, so their columns.
  if (is("blk.{L}.ffn_gate_exps.bias") || is("blk.{L}.ffn_up_exps.bias") ||
      is("blk.{L}.ffn_down_exps.weight") || is("blk.{L}.ffn_down.{E}.weight")) {
    return columns(expert_rows.begin, expert_rows.count);
  }
  // Added to each expert's partial output before the all-reduce: by one rank only.
  if (is("blk.{L}.ffn_down_exps.bias") && rank_ != 0) return Slicing{.kind = Slicing::kHidden};
  return Slicing{};
}

Expected<TensorParallelSource::Slice> TensorParallelSource::MakeSlice(
    const GgufTensor& tensor, const Slicing& slicing) const {
  auto traits = GetSupportedTypeTraits(tensor.type);
  if (!traits) {
    return Error{"tensor '" + tensor.name + "' has unsupported type " +
                 GgmlTypeName(static_cast<uint32_t>(tensor.type))};
  }
  Slice slice{.tensor = tensor, .bytes = {}};
  // A vector's rows are its values; a matrix's, shape[1] of shape[0] values per expert.
  const bool is_vector = tensor.shape.size() == 1;
  const int64_t cols = is_vector ? 1 : tensor.shape[0];
  const int64_t rows_per_expert = is_vector ? tensor.shape[0] : tensor.shape[1];
  int64_t num_experts = 1;
  for (size_t i = 2; i < tensor.shape.size(); ++i) num_experts *= tensor.shape[i];
  if (cols % traits->block_size != 0) {
    return Error{"tensor '" + tensor.name + "' cannot be split: its rows are not whole blocks"};
  }
  const int64_t row_bytes = RowBytes(*traits, cols);
  if (slicing.kind == Slicing::kRows) {
    int64_t rows_out = 0;
    for (const RowRange& range : slicing.rows) {
      if (range.begin < 0 || range.begin + range.count > rows_per_expert) {
        return Error{"tensor '" + tensor.name + "' has too few rows to split"};
      }
      rows_out += range.count;
    }
    (is_vector ? slice.tensor.shape[0] : slice.tensor.shape[1]) = rows_out;
    slice.tensor.num_bytes = rows_out * row_bytes * num_experts;
    if (num_experts == 1 && slicing.rows.size() == 1) {  // one byte range: a view
      slice.tensor.data = tensor.data + slicing.rows[0].begin * row_bytes;
      return slice;
    }
    slice.bytes.reserve(slice.tensor.num_bytes);
    for (int64_t e = 0; e < num_experts; ++e) {
      const uint8_t* expert = tensor.data + e * rows_per_expert * row_bytes;
      for (const RowRange& range : slicing.rows) {
        const uint8_t* begin = expert + range.begin * row_bytes;
        slice.bytes.insert(slice.bytes.end(), begin, begin + range.count * row_bytes);
      }
    }
  } else {  // kColumns (Create checked the block alignment of the weights)
    if (is_vector || slicing.col_begin % traits->block_size != 0 ||
        slicing.col_count % traits->block_size != 0 ||
        slicing.col_begin + slicing.col_count > cols) {
      return Error{"tensor '" + tensor.name + "' cannot be split by columns"};
    }
    const int64_t num_rows = rows_per_expert * num_experts;
    const int64_t skip_bytes = RowBytes(*traits, slicing.col_begin);
    const int64_t slice_row_bytes = RowBytes(*traits, slicing.col_count);
    slice.tensor.shape[0] = slicing.col_count;
    slice.tensor.num_bytes = num_rows * slice_row_bytes;
    slice.bytes.resize(slice.tensor.num_bytes);
    for (int64_t r = 0; r < num_rows; ++r) {
      std::memcpy(slice.bytes.data() + r * slice_row_bytes,
                  tensor.data + r * row_bytes + skip_bytes, slice_row_bytes);
    }
    // Every page of the tensor was read for a part of it: let them go.
    ReleaseMappedPages(tensor.data, tensor.num_bytes);
  }
  slice.tensor.data = slice.bytes.data();
  return slice;
}

const GgufTensor* TensorParallelSource::Find(const std::string& gguf_name) const {
  const auto cached = slices_.find(gguf_name);
  if (cached != slices_.end()) return &cached->second.tensor;
  const GgufTensor* tensor = whole_.Find(gguf_name);
  if (tensor == nullptr) return nullptr;
  const Slicing slicing = SlicingOf(gguf_name, *tensor);
  if (slicing.kind == Slicing::kWhole) return tensor;
  if (slicing.kind == Slicing::kHidden) return nullptr;
  auto slice = MakeSlice(*tensor, slicing);
  // A tensor that cannot be split (a malformed file) is handed out whole, so that the loader's
  // shape check names it.
  if (!slice) return tensor;
  return &slices_.emplace(gguf_name, std::move(*slice)).first->second.tensor;
}

void TensorParallelSource::ReleaseCopies() {
  std::erase_if(slices_, [](const auto& entry) { return !entry.second.bytes.empty(); });
}

}  // namespace vllm
