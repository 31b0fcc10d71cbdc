#include "lora/lora_file_pairs.h"

#include <cstring>

#include "kernels/ops.h"
#include "lora/qk_row_order.h"

namespace vllm::lora {
namespace {

std::string TargetLabel(int64_t layer, LoraTarget target) {
  return "layer " + std::to_string(layer) + " " + std::string(PeftModuleName(target));
}

// One pair checked against the base and brought to its row order, scale folded into B.
Status FitPairToBase(const LoraBaseShape& base, int64_t max_lora_rank, bool qk_rows_permuted,
                     LoraFilePair* pair) {
  const std::string quoted = "tensor '" + pair->tensor_name + "'";
  LoraMatrices& matrices = pair->matrices;
  if (pair->layer >= base.num_layers) {
    return Error{quoted + ": layer " + std::to_string(pair->layer) + " is past the base's " +
                 std::to_string(base.num_layers) + " layers"};
  }
  if (!base.has_target[int(pair->target)]) {
    return Error{quoted + ": the base model has no " + std::string(PeftModuleName(pair->target)) +
                 " weight"};
  }
  if (matrices.rank > max_lora_rank) {
    return Error{"LoRA rank " + std::to_string(matrices.rank) + " is greater than max_lora_rank " +
                 std::to_string(max_lora_rank) + " (" + quoted + ")"};
  }
  const LoraTargetShape shape = TargetShape(base, pair->target);
  if (matrices.in_features != shape.in_features || matrices.out_features != shape.out_features) {
    return Error{quoted + ": " + TargetLabel(pair->layer, pair->target) + " is [" +
                 std::to_string(matrices.out_features) + ", " +
                 std::to_string(matrices.in_features) + "] (out, in), the base's weight is [" +
                 std::to_string(shape.out_features) + ", " + std::to_string(shape.in_features) +
                 "]"};
  }
  const bool is_qk = pair->target == LoraTarget::kQ || pair->target == LoraTarget::kK;
  if (is_qk && qk_rows_permuted != base.qk_rows_permuted_for_rope) {
    const int64_t num_heads = pair->target == LoraTarget::kQ ? base.num_heads : base.num_kv_heads;
    if (num_heads <= 0 || base.head_dim % 2 != 0 ||
        num_heads * base.head_dim != matrices.out_features) {
      return Error{quoted + ": cannot reorder its rows for RoPE: " + std::to_string(num_heads) +
                   " heads of " + std::to_string(base.head_dim) + " do not make " +
                   std::to_string(matrices.out_features) + " rows"};
    }
    matrices.b = base.qk_rows_permuted_for_rope
                     ? PermuteQkRowsForRope(matrices.b, matrices.rank, num_heads)
                     : UnpermuteQkRowsForRope(matrices.b, matrices.rank, num_heads);
  }
  for (float& value : matrices.b) value *= pair->scale;
  return Status::Ok();
}

}  // namespace

Expected<std::vector<float>> TensorValuesF32(const std::string& name, GgmlType type,
                                             const void* data, int64_t num_bytes, int64_t rows,
                                             int64_t cols) {
  const GgmlTypeTraits* traits = FindSupportedType(type);
  if (traits == nullptr || traits->not_in_gguf != nullptr) {
    return Error{"tensor '" + name + "' has type " + GgmlTypeName(static_cast<uint32_t>(type)) +
                 ": LoRA matrices must be F32, F16, BF16 or a GGUF quantized type"};
  }
  if (rows < 0 || cols < 0 || cols % traits->block_size != 0) {
    return Error{"tensor '" + name + "' has rows of " + std::to_string(cols) +
                 " values, not whole " + traits->name + " blocks"};
  }
  const int64_t row_bytes = RowBytes(*traits, cols);
  if (rows * row_bytes != num_bytes) {
    return Error{"tensor '" + name + "' holds " + std::to_string(num_bytes) + " bytes, not the " +
                 std::to_string(rows * row_bytes) + " of its shape"};
  }
  std::vector<float> values(rows * cols);
  // Rows are decoded from an aligned copy: file offsets need not be aligned for the type.
  std::vector<uint8_t> row_copy(row_bytes);
  for (int64_t row = 0; row < rows; ++row) {
    std::memcpy(row_copy.data(), static_cast<const uint8_t*>(data) + row * row_bytes, row_bytes);
    kernels::DequantizeRow(type, row_copy.data(), cols, values.data() + row * cols);
  }
  return values;
}

Status AddLoraFilePairs(const LoraBaseShape& base, const std::vector<LoraTarget>& fused_targets,
                        LoraFilePair pair, LoraFilePairs* out) {
  if (fused_targets.size() == 1) {
    pair.target = fused_targets[0];
    out->pairs.push_back(std::move(pair));
    return Status::Ok();
  }
  int64_t fused_rows = 0;
  for (LoraTarget target : fused_targets) fused_rows += TargetShape(base, target).out_features;
  const LoraMatrices& fused = pair.matrices;
  if (fused.out_features != fused_rows) {
    return Error{"tensor '" + pair.tensor_name + "': the fused lora_B has " +
                 std::to_string(fused.out_features) + " rows, the base's fused weight " +
                 std::to_string(fused_rows)};
  }
  int64_t first_row = 0;
  for (LoraTarget target : fused_targets) {
    const int64_t rows = TargetShape(base, target).out_features;
    LoraFilePair part{pair.layer, target, pair.tensor_name, {}, pair.scale};
    part.matrices = {fused.rank, fused.in_features, rows, fused.a,
                     std::vector<float>(fused.b.begin() + first_row * fused.rank,
                                        fused.b.begin() + (first_row + rows) * fused.rank)};
    out->pairs.push_back(std::move(part));
    first_row += rows;
  }
  return Status::Ok();
}

Expected<LoraWeights> AssembleLoraWeights(const LoraRequest& request, const LoraBaseShape& base,
                                          int64_t max_lora_rank, LoraFilePairs file_pairs) {
  if (file_pairs.pairs.empty()) return Error{"the adapter holds no LoRA tensors"};
  LoraWeights weights;
  weights.name = request.lora_name;
  weights.id = request.lora_int_id;
  weights.layers.resize(base.num_layers);
  for (LoraFilePair& pair : file_pairs.pairs) {
    VLLM_RETURN_IF_ERROR(
        FitPairToBase(base, max_lora_rank, file_pairs.qk_rows_permuted_for_rope, &pair));
    std::optional<LoraMatrices>& slot = weights.layers[pair.layer].targets[int(pair.target)];
    if (slot.has_value()) {
      return Error{"tensor '" + pair.tensor_name + "': " + TargetLabel(pair.layer, pair.target) +
                   " has two LoRA pairs (a fused module and its part?)"};
    }
    weights.rank = std::max(weights.rank, pair.matrices.rank);
    slot = std::move(pair.matrices);
  }
  return weights;
}

}  // namespace vllm::lora
