#include "model/quant_recipe.h"

#include <algorithm>
#include <cctype>

namespace vllm {
namespace {

// llama.cpp's rule for the layers that get more bits in the _M mixes: the first and last eighth,
// and every third layer in between.
bool UsesMoreBits(int64_t layer, int64_t num_layers) {
  return layer < num_layers / 8 || layer >= 7 * num_layers / 8 || (layer - num_layers / 8) % 3 == 2;
}

// The layer index of "blk.<i>.<name>", or -1.
int64_t LayerOf(const std::string& tensor_name) {
  if (tensor_name.rfind("blk.", 0) != 0) return -1;
  return std::stoll(tensor_name.substr(4));
}

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A type whose blocks do not divide the row falls back as llama.cpp's quantizer does (the type's
// row_fallback in common/ggml_type.h).
GgmlType FallbackFor(GgmlType type, int64_t row_length) {
  const GgmlTypeTraits& traits = *FindSupportedType(type);
  if (row_length % traits.block_size == 0) return type;
  return traits.row_fallback.value_or(type);
}

}  // namespace

Expected<QuantRecipe> QuantRecipe::Parse(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // A mix: its name, the type of most matrices and llama.cpp's general.file_type for it.
  struct MixFacts {
    const char* name;
    GgmlType base_type;
    Mix mix;
    uint32_t file_type;
  };
  // mxfp4_moe is gpt-oss as released: experts in MXFP4, the other matrices in BF16.
  static constexpr MixFacts kMixes[] = {
      {"q4_k_m", GgmlType::kQ4_K, Mix::kQ4_K_M, 15},
      {"q5_k_m", GgmlType::kQ5_K, Mix::kQ5_K_M, 17},
      {"q4_k_s", GgmlType::kQ4_K, Mix::kQ4_K_S, 14},
      {"mxfp4_moe", GgmlType::kBF16, Mix::kMxfp4Moe, 38},
  };
  std::string mix_names;
  for (const MixFacts& mix : kMixes) {
    if (lower == mix.name) return QuantRecipe(lower, mix.base_type, mix.mix, mix.file_type);
    mix_names += (mix_names.empty() ? "" : ", ") + std::string(mix.name);
  }
  auto type = ParseGgmlType(lower);
  if (!type) {
    return Error{"unknown type '" + name + "' (" + SupportedTypeNames() + ", or the mixes " +
                 mix_names + ")"};
  }
  const GgmlTypeTraits& row = *FindSupportedType(*type);
  if (row.not_in_gguf != nullptr) return Error{"type '" + name + "' is " + row.not_in_gguf};
  return QuantRecipe(lower, *type, Mix::kNone, row.file_type);
}

GgmlType QuantRecipe::TypeFor(const std::string& tensor_name, int64_t num_layers,
                              int64_t row_length) const {
  GgmlType type = base_type_;
  const int64_t layer = LayerOf(tensor_name);
  if (mix_ == Mix::kMxfp4Moe) {
    if (tensor_name.find("_exps.") != std::string::npos) type = GgmlType::kMXFP4;
  } else if (mix_ != Mix::kNone) {
    if (tensor_name == "output.weight") {
      type = GgmlType::kQ6_K;
    } else if (EndsWith(tensor_name, "attn_v.weight")) {
      if (mix_ == Mix::kQ4_K_S) {
        if (layer < 4) type = GgmlType::kQ5_K;
      } else if (UsesMoreBits(layer, num_layers)) {
        type = GgmlType::kQ6_K;
      }
    } else if (tensor_name.find("ffn_down") != std::string::npos) {  // dense or experts
      if (mix_ == Mix::kQ4_K_S) {
        if (layer < num_layers / 8) type = GgmlType::kQ5_K;
      } else if (UsesMoreBits(layer, num_layers)) {
        type = GgmlType::kQ6_K;
      }
    }
  }
  return FallbackFor(type, row_length);
}

}  // namespace vllm
