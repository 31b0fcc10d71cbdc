#include "lora/lora_weights.h"

#include "kernels/row_conversions.h"

namespace vllm::lora {

std::string_view PeftModuleName(LoraTarget target) {
  switch (target) {
    case LoraTarget::kQ:
      return "q_proj";
    case LoraTarget::kK:
      return "k_proj";
    case LoraTarget::kV:
      return "v_proj";
    case LoraTarget::kO:
      return "o_proj";
    case LoraTarget::kGate:
      return "gate_proj";
    case LoraTarget::kUp:
      return "up_proj";
    case LoraTarget::kDown:
      return "down_proj";
  }
  return "";
}

void StoreLoraMatricesAs(LoraDtype dtype, LoraMatrices& matrices) {
  if (dtype == matrices.dtype || dtype == LoraDtype::kFloat32) return;
  matrices.a_bf16.resize(matrices.a.size());
  matrices.b_bf16.resize(matrices.b.size());
  kernels::QuantizeRowBf16(matrices.a.data(), static_cast<int64_t>(matrices.a.size()),
                           matrices.a_bf16.data());
  std::vector<float> b_transposed(matrices.b.size());
  for (int64_t o = 0; o < matrices.out_features; ++o) {
    for (int64_t r = 0; r < matrices.rank; ++r) {
      b_transposed[r * matrices.out_features + o] = matrices.b[o * matrices.rank + r];
    }
  }
  kernels::QuantizeRowBf16(b_transposed.data(), static_cast<int64_t>(b_transposed.size()),
                           matrices.b_bf16.data());
  matrices.a = {};
  matrices.b = {};
  matrices.dtype = LoraDtype::kBfloat16;
}

}  // namespace vllm::lora
