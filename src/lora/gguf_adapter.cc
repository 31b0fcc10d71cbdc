#include "lora/gguf_adapter.h"

#include <charconv>
#include <map>
#include <string_view>

namespace vllm::lora {
namespace {

// llama.cpp's weight names of the targets; a fused weight lists its parts in its rows' order.
struct GgufWeight {
  std::string_view name;
  std::vector<LoraTarget> targets;
};

const std::vector<GgufWeight>& GgufWeights() {
  static const std::vector<GgufWeight> weights = {
      {"attn_q", {LoraTarget::kQ}},
      {"attn_k", {LoraTarget::kK}},
      {"attn_v", {LoraTarget::kV}},
      {"attn_output", {LoraTarget::kO}},
      {"ffn_gate", {LoraTarget::kGate}},
      {"ffn_up", {LoraTarget::kUp}},
      {"ffn_down", {LoraTarget::kDown}},
      {"attn_qkv", {LoraTarget::kQ, LoraTarget::kK, LoraTarget::kV}},
  };
  return weights;
}

std::string GgufWeightNames() {
  std::string names;
  for (const GgufWeight& weight : GgufWeights()) {
    names += (names.empty() ? "" : ", ") + std::string(weight.name);
  }
  return names;
}

// "blk.<layer>.<weight>.weight" → layer and weight.
struct GgufStem {
  int64_t layer = 0;
  const GgufWeight* weight = nullptr;
};

Expected<GgufStem> ParseStem(const std::string& tensor_name, std::string_view stem) {
  const std::string quoted = "tensor '" + tensor_name + "'";
  if (stem.starts_with("token_embd") || stem.starts_with("output.")) {
    return Error{quoted + ": embedding and output (lm_head) LoRA is not supported"};
  }
  if (!stem.starts_with("blk.") || !stem.ends_with(".weight")) {
    return Error{quoted + " is not blk.N.<weight>.weight.lora_a / lora_b"};
  }
  stem.remove_prefix(4);
  stem.remove_suffix(7);
  GgufStem out;
  const auto [end, error] = std::from_chars(stem.data(), stem.data() + stem.size(), out.layer);
  if (error != std::errc() || end == stem.data() + stem.size() || *end != '.' || out.layer < 0) {
    return Error{quoted + " has no layer index (blk.N.)"};
  }
  const std::string_view weight(end + 1, stem.data() + stem.size() - (end + 1));
  for (const GgufWeight& known : GgufWeights()) {
    if (known.name == weight) out.weight = &known;
  }
  if (out.weight == nullptr) {
    return Error{quoted + " targets unknown weight '" + std::string(weight) +
                 "' (supported: " + GgufWeightNames() + ")"};
  }
  return out;
}

struct WeightTensors {
  GgufStem stem;
  const GgufTensor* a = nullptr;
  const GgufTensor* b = nullptr;
};

Status CheckHeader(const GgufFile& file, const LoraBaseShape& base) {
  auto type = file.GetString("general.type");
  if (!type) return Error{type.error()};
  if (!type->has_value() || **type != "adapter") {
    return Error{"general.type is " + (type->has_value() ? "'" + **type + "'" : "missing") +
                 ", not 'adapter': not a GGUF LoRA adapter"};
  }
  auto adapter_type = file.GetString("adapter.type");
  if (!adapter_type) return Error{adapter_type.error()};
  if (!adapter_type->has_value() || **adapter_type != "lora") {
    return Error{"adapter.type is " +
                 (adapter_type->has_value() ? "'" + **adapter_type + "'" : "missing") +
                 ", not 'lora'"};
  }
  auto architecture = file.GetString("general.architecture");
  if (!architecture) return Error{architecture.error()};
  if (architecture->has_value() && !base.architecture.empty() &&
      **architecture != base.architecture) {
    return Error{"general.architecture '" + **architecture + "' does not match the base model's '" +
                 base.architecture + "'"};
  }
  return Status::Ok();
}

// lora_a: ggml ne [in, r]; lora_b: ne [r, out] (row-major [r, in] and [out, r]).
Expected<LoraFilePair> ReadWeightPair(const WeightTensors& weight, double alpha) {
  const GgufTensor& a = *weight.a;
  const GgufTensor& b = *weight.b;
  if (a.shape.size() != 2 || b.shape.size() != 2) {
    return Error{"tensors '" + a.name + "' and '" + b.name + "' must both be 2-D"};
  }
  const int64_t rank = a.shape[1];
  if (b.shape[0] != rank) {
    return Error{"tensor '" + a.name + "' has rank " + std::to_string(rank) + " but '" + b.name +
                 "' has " + std::to_string(b.shape[0]) + " (is lora_a transposed?)"};
  }
  if (rank <= 0) return Error{"tensor '" + a.name + "' has rank 0"};
  LoraFilePair pair;
  pair.layer = weight.stem.layer;
  pair.tensor_name = a.name;
  // llama.cpp: an adapter without alpha applies B·A unscaled.
  pair.scale = alpha != 0 ? static_cast<float>(alpha / double(rank)) : 1.0f;
  auto a_values = TensorValuesF32(a.name, a.type, a.data, a.num_bytes, rank, a.shape[0]);
  if (!a_values) return Error{a_values.error()};
  auto b_values = TensorValuesF32(b.name, b.type, b.data, b.num_bytes, b.shape[1], rank);
  if (!b_values) return Error{b_values.error()};
  pair.matrices = {rank, a.shape[0], b.shape[1], std::move(*a_values), std::move(*b_values)};
  return pair;
}

}  // namespace

Expected<LoraFilePairs> ReadGgufAdapter(const GgufFile& file, const LoraBaseShape& base) {
  VLLM_RETURN_IF_ERROR(CheckHeader(file, base));
  auto alpha = file.GetFloat("adapter.lora.alpha");
  if (!alpha) return Error{alpha.error()};

  std::map<std::string, WeightTensors> weights;  // by stem, in name order
  for (const GgufTensor& tensor : file.tensors()) {
    const bool is_a = tensor.name.ends_with(".lora_a");
    if (!is_a && !tensor.name.ends_with(".lora_b")) {
      return Error{"tensor '" + tensor.name + "' is not a LoRA matrix (.lora_a / .lora_b)"};
    }
    const std::string stem = tensor.name.substr(0, tensor.name.size() - 7);
    auto parsed = ParseStem(tensor.name, stem);
    if (!parsed) return Error{parsed.error()};
    WeightTensors& weight = weights[stem];
    weight.stem = *parsed;
    (is_a ? weight.a : weight.b) = &tensor;  // the reader refuses repeated tensor names
  }
  LoraFilePairs out;
  out.qk_rows_permuted_for_rope = base.gguf_permutes_qk_rows;
  for (const auto& [stem, weight] : weights) {
    if (weight.a == nullptr || weight.b == nullptr) {
      const GgufTensor* present = weight.a != nullptr ? weight.a : weight.b;
      return Error{"tensor '" + present->name + "' has no " + (weight.a ? "lora_b" : "lora_a")};
    }
    auto pair = ReadWeightPair(weight, alpha->value_or(0.0));
    if (!pair) return Error{pair.error()};
    std::vector<LoraTarget> targets = weight.stem.weight->targets;
    // Phi-3's ffn_up holds gate and up: a lora_b of twice the up rows splits into both.
    if (targets[0] == LoraTarget::kUp && base.has_target[int(LoraTarget::kGate)] &&
        pair->matrices.out_features == 2 * base.intermediate_size) {
      targets = {LoraTarget::kGate, LoraTarget::kUp};
    }
    VLLM_RETURN_IF_ERROR(AddLoraFilePairs(base, targets, std::move(*pair), &out));
  }
  return out;
}

}  // namespace vllm::lora
