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

GgmlType FallbackFor(GgmlType type, int64_t row_length) {
  const int64_t block_size = GetSupportedTypeTraits(type)->block_size;
  if (row_length % block_size == 0) return type;
  switch (type) {
    case GgmlType::kQ4_K:
      return GgmlType::kQ5_0;
    case GgmlType::kQ5_K:
      return GgmlType::kQ5_1;
    case GgmlType::kQ6_K:
      return GgmlType::kQ8_0;
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kIQ4_XS:
      return GgmlType::kIQ4_NL;
    default:
      return type;
  }
}

}  // namespace

Expected<QuantRecipe> QuantRecipe::Parse(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "q4_k_m") return QuantRecipe(lower, GgmlType::kQ4_K, Mix::kQ4_K_M);
  if (lower == "q5_k_m") return QuantRecipe(lower, GgmlType::kQ5_K, Mix::kQ5_K_M);
  if (lower == "q4_k_s") return QuantRecipe(lower, GgmlType::kQ4_K, Mix::kQ4_K_S);
  // gpt-oss as released: experts in MXFP4, the other matrices in BF16.
  if (lower == "mxfp4_moe") return QuantRecipe(lower, GgmlType::kBF16, Mix::kMxfp4Moe);
  auto type = ParseGgmlType(lower);
  if (!type) {
    return Error{"unknown type '" + name + "' (" + SupportedTypeNames() +
                 ", or the mixes q4_k_m, q5_k_m, q4_k_s, mxfp4_moe)"};
  }
  return QuantRecipe(lower, *type, Mix::kNone);
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

uint32_t QuantRecipe::file_type() const {
  switch (mix_) {
    case Mix::kQ4_K_S:
      return 14;
    case Mix::kQ4_K_M:
      return 15;
    case Mix::kQ5_K_M:
      return 17;
    case Mix::kMxfp4Moe:
      return 38;
    case Mix::kNone:
      break;
  }
  // llama.cpp's LLAMA_FTYPE_* for files mostly of one type (single K types as their _S mix).
  switch (base_type_) {
    case GgmlType::kF32:
      return 0;
    case GgmlType::kF16:
      return 1;
    case GgmlType::kQ4_0:
      return 2;
    case GgmlType::kQ4_1:
      return 3;
    case GgmlType::kQ8_0:
      return 7;
    case GgmlType::kQ5_0:
      return 8;
    case GgmlType::kQ5_1:
      return 9;
    case GgmlType::kQ2_K:
      return 10;
    case GgmlType::kQ3_K:
      return 11;
    case GgmlType::kQ4_K:
      return 14;
    case GgmlType::kQ5_K:
      return 16;
    case GgmlType::kQ6_K:
      return 18;
    case GgmlType::kIQ4_NL:
      return 25;
    case GgmlType::kIQ4_XS:
      return 30;
    case GgmlType::kBF16:
      return 32;
    case GgmlType::kMXFP4:
      return 38;
    default:
      return 0;
  }
}

}  // namespace vllm
