// gpt-oss (layers/decoder.h): pre-norm RMSNorm blocks (the norm before the FFN is named
// post_attention_norm), attention with Q/K/V/O biases and a learned per-head sink logit in the
// softmax, alternating sliding-window (layers 0, 2, 4, ...) and full-attention
// layers, NeoX RoPE with YaRN scaling (correction range not truncated, as in the reference), and a
// mixture of experts in every layer: a biased router, softmax over the top-k logits, experts with
// biases and the clamped SwiGLU (gate ≤ 7, up in [-7, 7], gate·σ(1.702 gate)·(up + 1)), expert
// weights in any type (MXFP4 in the released files).
//
// Hugging Face checkpoints fuse each layer's expert gate and up projections into one tensor whose
// rows interleave them (row 2j: gate j, row 2j + 1: up j), stored either as MXFP4 (…_blocks: U8
// [E, rows, cols / 32, 16], two values per byte, low nibble first; …_scales: U8 E8M0 [E, rows,
// cols / 32]) or as floats transposed ([E, cols, rows]). They are converted to llama.cpp's
// separate ffn_{gate,up,down}_exps tensors (MXFP4 blocks of a scale byte and 16 bytes whose byte j
// holds values j and j + 16) at load, and back on export.
#include <cstring>

#include "kernels/quant_blocks.h"
#include "model/architecture.h"
#include "model/hf_checkpoint.h"
#include "model/layers/decoder.h"
#include "model/layers/rope.h"
#include "model/random_model_plan.h"
#include "model/registry.h"

namespace vllm {
namespace {

Expected<std::unique_ptr<Model>> CreateGptOss(const TensorSource& source, const ModelConfig& config,
                                              const ModelLoadOptions& options) {
  if (config.num_experts <= 0) return Error{"gpt-oss model config has no experts"};
  auto rope = std::make_shared<Rope>(RopeForConfig(config));
  DecoderOptions decoder_options{.expert_activation = ExpertActivation::kClampedSwiglu,
                                 .ffn_norm_name = "post_attention_norm"};
  return CreateDecoder(source, config, options, decoder_options,
                       [rope](int64_t) -> const Rope& { return *rope; });
}

Status ReadGptOssGguf(const GgufFile& file, ModelConfig* config) {
  const std::string& a = config->architecture;
  config->sliding_window = 128;
  config->sliding_window_pattern = 2;
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".attention.sliding_window", &config->sliding_window));
  VLLM_RETURN_IF_ERROR(
      ReadGgufInt(file, a + ".attention.sliding_window_pattern", &config->sliding_window_pattern));
  config->rope_yarn_truncate = false;  // the reference's correction range is not rounded
  return Status::Ok();
}

Status ReadGptOssHf(const nlohmann::json& text, ModelConfig* config, HfDerivedTensors*) {
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_local_experts", &config->num_experts));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "experts_per_token", &config->num_experts_per_token));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_experts_per_tok", &config->num_experts_per_token));
  config->expert_intermediate_size = config->intermediate_size;
  config->sliding_window_pattern = 2;
  double swiglu_limit = 7.0;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "swiglu_limit", &swiglu_limit));
  if (swiglu_limit != 7.0) return Error{"config.json: only swiglu_limit 7 is supported"};
  return Status::Ok();
}

Status WriteGptOssHf(const GgufFile&, const ModelConfig& config, nlohmann::json* out) {
  (*out)["num_local_experts"] = config.num_experts;
  (*out)["num_experts_per_tok"] = config.num_experts_per_token;
  (*out)["intermediate_size"] = config.expert_intermediate_size;
  (*out)["swiglu_limit"] = 7.0;
  (*out)["attention_bias"] = true;
  nlohmann::json layer_types = nlohmann::json::array();
  for (int64_t layer = 0; layer < config.num_layers; ++layer) {
    layer_types.push_back(config.LayerSlidingWindow(layer) > 0 ? "sliding_attention"
                                                               : "full_attention");
  }
  (*out)["layer_types"] = std::move(layer_types);
  return Status::Ok();
}

// Llama's attention names (the norm before the experts is post_attention_norm in llama.cpp's
// gpt-oss files), plus the output projection's bias, the sinks and the router; the experts are
// converted (ConvertGptOssHfTensor).
std::vector<TensorNamePair> GptOssNames() {
  std::vector<TensorNamePair> names = LlamaHfTensorNamesWithPostAttentionNorm();
  const std::string layer = "model.layers.{L}.";
  names.insert(names.end(), {{layer + "self_attn.o_proj.bias", "blk.{L}.attn_output.bias"},
                             {layer + "self_attn.sinks", "blk.{L}.attn_sinks.weight"},
                             {layer + "mlp.router.weight", "blk.{L}.ffn_gate_inp.weight"},
                             {layer + "mlp.router.bias", "blk.{L}.ffn_gate_inp.bias"}});
  return names;
}

// ---- Expert tensor conversion ----

constexpr int64_t kMxfp4BlockValues = 32;  // values per MXFP4 block
constexpr int64_t kMxfp4PackedBytes = 16;  // nibble bytes per block

// One MXFP4 block from Hugging Face's 16 bytes (byte j: values 2j, 2j + 1) and scale byte.
kernels::BlockMxfp4 BlockFromHf(const uint8_t* packed, uint8_t scale) {
  kernels::BlockMxfp4 block;
  block.e = scale;
  auto code = [&](int i) { return (packed[i / 2] >> (4 * (i % 2))) & 0x0F; };
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(code(j) | (code(j + 16) << 4));
  return block;
}

// Hugging Face's 16 bytes of one ggml MXFP4 block (the scale byte is block.e).
void BlockToHf(const kernels::BlockMxfp4& block, uint8_t* packed) {
  auto code = [&](int i) { return (block.qs[i % 16] >> (4 * (i / 16))) & 0x0F; };
  for (int j = 0; j < 16; ++j)
    packed[j] = static_cast<uint8_t>(code(2 * j) | (code(2 * j + 1) << 4));
}

// Which of a fused tensor's rows one GGUF tensor takes: all, or every other from `first`.
struct RowSelection {
  int64_t first = 0;
  int64_t step = 1;
};

// MXFP4 blocks ([E, rows, cols / 32, 16]) and scales ([E, rows, cols / 32]) → the selected rows
// as a GGUF MXFP4 tensor of ggml shape {cols, rows / step, E}.
OwnedTensor ExpertsFromHfBlocks(const std::string& name, const SafetensorsTensor& blocks,
                                const SafetensorsTensor& scales, RowSelection rows) {
  const int64_t num_experts = blocks.shape[0], num_rows = blocks.shape[1];
  const int64_t blocks_per_row = blocks.shape[2];
  const int64_t out_rows = num_rows / rows.step;
  OwnedTensor out{
      name, GgmlType::kMXFP4, {blocks_per_row * kMxfp4BlockValues, out_rows, num_experts}, {}};
  out.bytes.resize(num_experts * out_rows * blocks_per_row * sizeof(kernels::BlockMxfp4));
  auto* dst = reinterpret_cast<kernels::BlockMxfp4*>(out.bytes.data());
  const auto* packed = static_cast<const uint8_t*>(blocks.data);
  const auto* scale = static_cast<const uint8_t*>(scales.data);
  for (int64_t e = 0; e < num_experts; ++e) {
    for (int64_t r = 0; r < out_rows; ++r) {
      const int64_t row = e * num_rows + rows.first + r * rows.step;
      for (int64_t b = 0; b < blocks_per_row; ++b) {
        const int64_t index = row * blocks_per_row + b;
        *dst++ = BlockFromHf(packed + index * kMxfp4PackedBytes, scale[index]);
      }
    }
  }
  return out;
}

// Float experts [E, cols, rows] (x @ W form) → the selected rows of the transpose, ggml shape
// {cols, rows / step, E}, in the stored float type.
OwnedTensor ExpertsFromHfFloats(const std::string& name, const SafetensorsTensor& weights,
                                RowSelection rows) {
  const int64_t num_experts = weights.shape[0], cols = weights.shape[1];
  const int64_t num_rows = weights.shape[2], out_rows = num_rows / rows.step;
  const int64_t element = weights.num_bytes / (num_experts * cols * num_rows);
  OwnedTensor out{name, weights.type, {cols, out_rows, num_experts}, {}};
  out.bytes.resize(num_experts * out_rows * cols * element);
  const auto* src = static_cast<const uint8_t*>(weights.data);
  for (int64_t e = 0; e < num_experts; ++e) {
    for (int64_t r = 0; r < out_rows; ++r) {
      const int64_t row = rows.first + r * rows.step;
      for (int64_t c = 0; c < cols; ++c) {
        std::memcpy(out.bytes.data() + ((e * out_rows + r) * cols + c) * element,
                    src + ((e * cols + c) * num_rows + row) * element, element);
      }
    }
  }
  return out;
}

// Biases [E, rows] → the selected rows as f32, ggml shape {rows / step, E}.
OwnedTensor ExpertBiasesFromHf(const std::string& name, const SafetensorsTensor& biases,
                               RowSelection rows) {
  const int64_t num_experts = biases.shape[0], num_rows = biases.shape[1];
  const int64_t out_rows = num_rows / rows.step;
  std::vector<float> all(num_experts * num_rows), selected;
  kernels::DequantizeRow(biases.type, static_cast<const uint8_t*>(biases.data), all.size(),
                         all.data());
  for (int64_t e = 0; e < num_experts; ++e) {
    for (int64_t r = 0; r < out_rows; ++r) {
      selected.push_back(all[e * num_rows + rows.first + r * rows.step]);
    }
  }
  OwnedTensor out{name, GgmlType::kF32, {out_rows, num_experts}, {}};
  out.bytes.resize(selected.size() * sizeof(float));
  std::memcpy(out.bytes.data(), selected.data(), out.bytes.size());
  return out;
}

// A tensor of rank `rank` whose every dimension is positive; an error naming it otherwise.
Status CheckRank(const SafetensorsTensor& tensor, size_t rank) {
  if (tensor.shape.size() != rank) {
    return Error{"expected a " + std::to_string(rank) + "-D tensor"};
  }
  for (int64_t dim : tensor.shape) {
    if (dim <= 0) return Error{"has an empty dimension"};
  }
  return Status::Ok();
}

Expected<bool> ConvertGptOssHfTensor(const SafetensorsModel& weights,
                                     const SafetensorsTensor& tensor,
                                     std::vector<OwnedTensor>* out) {
  int64_t layer = -1, unused = -1;
  const std::string hf_name = TextModelTensorName(tensor.name);
  const std::string experts = "model.layers.{L}.mlp.experts.";
  std::string kind;  // gate_up_proj / down_proj with its suffix
  for (const char* candidate :
       {"gate_up_proj_blocks", "gate_up_proj_scales", "gate_up_proj", "gate_up_proj_bias",
        "down_proj_blocks", "down_proj_scales", "down_proj", "down_proj_bias"}) {
    if (MatchTensorName(experts + candidate, hf_name, &layer, &unused)) kind = candidate;
  }
  if (kind.empty()) return false;
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  const bool gate_up = kind.starts_with("gate_up");
  const RowSelection all_rows, gate_rows{0, 2}, up_rows{1, 2};
  if (kind.ends_with("_scales")) return true;  // read with the blocks
  if (kind.ends_with("_bias")) {
    VLLM_RETURN_IF_ERROR(CheckRank(tensor, 2));
    if (!IsSafetensorsFloatType(tensor.type)) return Error{"biases must be floats"};
    if (gate_up) {
      if (tensor.shape[1] % 2 != 0) return Error{"gate_up_proj_bias has an odd row count"};
      out->push_back(ExpertBiasesFromHf(prefix + "ffn_gate_exps.bias", tensor, gate_rows));
      out->push_back(ExpertBiasesFromHf(prefix + "ffn_up_exps.bias", tensor, up_rows));
    } else {
      out->push_back(ExpertBiasesFromHf(prefix + "ffn_down_exps.bias", tensor, all_rows));
    }
    return true;
  }
  if (kind.ends_with("_blocks")) {
    const std::string scales_name =
        tensor.name.substr(0, tensor.name.size() - std::string("blocks").size()) + "scales";
    const SafetensorsTensor* scales = weights.FindTensor(scales_name);
    if (scales == nullptr) return Error{"missing " + scales_name};
    VLLM_RETURN_IF_ERROR(CheckRank(tensor, 4));
    VLLM_RETURN_IF_ERROR(CheckRank(*scales, 3));
    if (tensor.type != GgmlType::kI8 || scales->type != GgmlType::kI8 ||
        tensor.shape[3] != kMxfp4PackedBytes ||
        !std::equal(scales->shape.begin(), scales->shape.end(), tensor.shape.begin()) ||
        (gate_up && tensor.shape[1] % 2 != 0)) {
      return Error{
          "MXFP4 blocks must be U8 [E, rows, cols / 32, 16] with U8 scales [E, rows, "
          "cols / 32]"};
    }
    if (gate_up) {
      out->push_back(
          ExpertsFromHfBlocks(prefix + "ffn_gate_exps.weight", tensor, *scales, gate_rows));
      out->push_back(ExpertsFromHfBlocks(prefix + "ffn_up_exps.weight", tensor, *scales, up_rows));
    } else {
      out->push_back(
          ExpertsFromHfBlocks(prefix + "ffn_down_exps.weight", tensor, *scales, all_rows));
    }
    return true;
  }
  VLLM_RETURN_IF_ERROR(CheckRank(tensor, 3));  // float experts, [E, cols, rows]
  if (!IsSafetensorsFloatType(tensor.type) || (gate_up && tensor.shape[2] % 2 != 0)) {
    return Error{"float experts must be [E, cols, rows] of F32, F16 or BF16"};
  }
  if (gate_up) {
    out->push_back(ExpertsFromHfFloats(prefix + "ffn_gate_exps.weight", tensor, gate_rows));
    out->push_back(ExpertsFromHfFloats(prefix + "ffn_up_exps.weight", tensor, up_rows));
  } else {
    out->push_back(ExpertsFromHfFloats(prefix + "ffn_down_exps.weight", tensor, all_rows));
  }
  return true;
}

// GGUF gate and up experts ({cols, rows, E} each, one type) interleaved back into Hugging Face's
// fused form; down experts alone. MXFP4 → blocks + scales, floats → transposed [E, cols, rows].
void ExportExperts(const std::string& hf_stem, std::vector<const GgufTensor*> parts,
                   std::vector<OwnedTensor>* out) {
  const GgufTensor& first = *parts.front();
  const int64_t cols = first.shape[0], rows = first.shape[1], num_experts = first.shape[2];
  const int64_t num_parts = static_cast<int64_t>(parts.size());
  const int64_t fused_rows = rows * num_parts;
  // Fused row f is row f / num_parts of part f % num_parts.
  auto source_row = [&](int64_t e, int64_t f, int64_t row_bytes) {
    return parts[f % num_parts]->data + (e * rows + f / num_parts) * row_bytes;
  };
  if (first.type == GgmlType::kMXFP4) {
    const int64_t blocks_per_row = cols / kMxfp4BlockValues;
    OwnedTensor blocks{hf_stem + "_blocks",
                       GgmlType::kI8,
                       {num_experts, fused_rows, blocks_per_row, kMxfp4PackedBytes},
                       {}};
    OwnedTensor scales{
        hf_stem + "_scales", GgmlType::kI8, {num_experts, fused_rows, blocks_per_row}, {}};
    blocks.bytes.resize(num_experts * fused_rows * blocks_per_row * kMxfp4PackedBytes);
    scales.bytes.resize(num_experts * fused_rows * blocks_per_row);
    const int64_t row_bytes = blocks_per_row * sizeof(kernels::BlockMxfp4);
    for (int64_t e = 0; e < num_experts; ++e) {
      for (int64_t f = 0; f < fused_rows; ++f) {
        const auto* row = reinterpret_cast<const kernels::BlockMxfp4*>(source_row(e, f, row_bytes));
        for (int64_t b = 0; b < blocks_per_row; ++b) {
          const int64_t index = (e * fused_rows + f) * blocks_per_row + b;
          BlockToHf(row[b], blocks.bytes.data() + index * kMxfp4PackedBytes);
          scales.bytes[index] = row[b].e;
        }
      }
    }
    out->push_back(std::move(blocks));
    out->push_back(std::move(scales));
    return;
  }
  const int64_t element = first.num_bytes / (cols * rows * num_experts);
  OwnedTensor fused{hf_stem, first.type, {num_experts, cols, fused_rows}, {}};
  fused.bytes.resize(num_experts * cols * fused_rows * element);
  for (int64_t e = 0; e < num_experts; ++e) {
    for (int64_t f = 0; f < fused_rows; ++f) {
      const uint8_t* row = source_row(e, f, cols * element);
      for (int64_t c = 0; c < cols; ++c) {
        std::memcpy(fused.bytes.data() + ((e * cols + c) * fused_rows + f) * element,
                    row + c * element, element);
      }
    }
  }
  out->push_back(std::move(fused));
}

// GGUF expert biases ({rows, E} f32 each) interleaved into Hugging Face's [E, fused rows].
OwnedTensor ExportExpertBiases(const std::string& name, std::vector<const GgufTensor*> parts) {
  const int64_t rows = parts.front()->shape[0], num_experts = parts.front()->shape[1];
  const int64_t num_parts = static_cast<int64_t>(parts.size());
  std::vector<float> fused(num_experts * rows * num_parts), part(rows * num_experts);
  for (int64_t p = 0; p < num_parts; ++p) {
    kernels::DequantizeRow(parts[p]->type, parts[p]->data, part.size(), part.data());
    for (int64_t e = 0; e < num_experts; ++e) {
      for (int64_t r = 0; r < rows; ++r) {
        fused[(e * rows + r) * num_parts + p] = part[e * rows + r];
      }
    }
  }
  OwnedTensor out{name, GgmlType::kF32, {num_experts, rows * num_parts}, {}};
  out.bytes.resize(fused.size() * sizeof(float));
  std::memcpy(out.bytes.data(), fused.data(), out.bytes.size());
  return out;
}

Expected<bool> ExportGptOssTensor(const GgufFile& file, const GgufTensor& tensor,
                                  std::vector<OwnedTensor>* out) {
  int64_t layer = -1, unused = -1;
  std::string kind;
  for (const char* candidate : {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"}) {
    for (const char* suffix : {".weight", ".bias"}) {
      if (MatchTensorName(std::string("blk.{L}.") + candidate + suffix, tensor.name, &layer,
                          &unused)) {
        kind = std::string(candidate) + suffix;
      }
    }
  }
  if (kind.empty()) return false;
  if (kind.starts_with("ffn_up_exps")) return true;  // fused with the gate experts
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  const std::string hf = "model.layers." + std::to_string(layer) + ".mlp.experts.";
  std::vector<const GgufTensor*> parts = {&tensor};
  const bool gate = kind.starts_with("ffn_gate_exps");
  if (gate) {
    const GgufTensor* up = file.FindTensor(prefix + "ffn_up" + kind.substr(8));
    if (up == nullptr || up->type != tensor.type || up->shape != tensor.shape) {
      return Error{"gate and up experts must have one type and shape to fuse"};
    }
    parts.push_back(up);
  }
  const std::string stem = hf + (gate ? "gate_up_proj" : "down_proj");
  if (kind.ends_with(".bias")) {
    out->push_back(ExportExpertBiases(stem + "_bias", parts));
  } else if (tensor.type == GgmlType::kMXFP4 || IsSafetensorsFloatType(tensor.type)) {
    ExportExperts(stem, parts, out);
  } else {
    return Error{"experts must be MXFP4, F32, F16 or BF16 to export"};
  }
  return true;
}

// YaRN x32 over a pretraining context of 1/32 of the shape's; biases on the projections, the
// router and the experts; sinks; the pre-FFN norm named post_attention_norm.
void PlanGptOssRandom(RandomModelPlan* plan) {
  plan->AddKey("rope.scaling.type", GgufValue::String("yarn"));
  plan->AddKey("rope.scaling.factor", GgufValue::Float32(32.0f));
  plan->AddKey("rope.scaling.original_context_length",
               GgufValue::Uint32(plan->shape().context_length / 32));
  plan->AddLayers({.qkv_bias = true, .output_bias = true, .attention_sinks = true},
                  {.norm_name = "post_attention_norm", .expert_biases = true});
}

}  // namespace

const Architecture kGptOssArchitecture{
    .name = "gpt-oss",
    .hf_names = {"GptOssForCausalLM"},
    .hf_model_type = "gpt_oss",
    .read_gguf = ReadGptOssGguf,
    .read_hf = ReadGptOssHf,
    .write_hf = WriteGptOssHf,
    .hf_tensors = GptOssNames(),
    .convert_hf_tensor = ConvertGptOssHfTensor,
    .export_hf_tensor = ExportGptOssTensor,
    .create = CreateGptOss,
    .plan_random_model = PlanGptOssRandom,
};

}  // namespace vllm
