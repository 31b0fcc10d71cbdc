// Which type each linear matrix of a model is stored in: one type for all, or one of llama.cpp's
// K-quant mixes (its _S / _M recipes keep attn_v, ffn_down and the output head in more bits than
// the rest). Used when writing random models and when converting weights at load.
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.h"
#include "common/ggml_type.h"

namespace vllm {

class QuantRecipe {
 public:
  // "f32", "bf16", "q4_K", "iq4_xs", ... (any supported type), or a mix: "q4_k_m", "q5_k_m",
  // "q4_k_s" (case-insensitive).
  static Expected<QuantRecipe> Parse(const std::string& name);

  // The type of the matrix `tensor_name` (llama.cpp's names: "blk.3.attn_v.weight",
  // "output.weight", "token_embd.weight") of a model with `num_layers` layers, whose rows hold
  // `row_length` values. A K-quant that does not divide the row falls back as llama.cpp's
  // quantizer does (Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, Q2_K / Q3_K / IQ4_XS → IQ4_NL).
  GgmlType TypeFor(const std::string& tensor_name, int64_t num_layers, int64_t row_length) const;

  // The type of most matrices, and llama.cpp's general.file_type for the file.
  GgmlType base_type() const { return base_type_; }
  uint32_t file_type() const { return file_type_; }
  const std::string& name() const { return name_; }

 private:
  enum class Mix { kNone, kQ4_K_S, kQ4_K_M, kQ5_K_M, kMxfp4Moe };
  QuantRecipe(std::string name, GgmlType base_type, Mix mix, uint32_t file_type)
      : name_(std::move(name)), base_type_(base_type), mix_(mix), file_type_(file_type) {}

  std::string name_;
  GgmlType base_type_;
  Mix mix_;
  uint32_t file_type_;
};

}  // namespace vllm
