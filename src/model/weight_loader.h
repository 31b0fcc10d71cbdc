// Fetches named tensors from a tensor source with their expected shapes checked, as kernel-ready
// weights. A missing tensor or a wrong shape is an error naming the tensor. Linear weights take
// the source's input order (TensorSource::InputOrder), whatever type they are converted to.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "kernels/ops.h"
#include "model/tensor_source.h"

namespace vllm {

class WeightLoader {
 public:
  // `linear_type`: convert linear weights stored in another type to it (see ModelLoadOptions),
  // except the source's quantized layers (TensorSource::IsQuantizedLinear), which keep theirs.
  explicit WeightLoader(const TensorSource& source,
                        std::optional<GgmlType> linear_type = std::nullopt)
      : source_(source), linear_type_(linear_type) {}

  bool Has(const std::string& name) const { return source_.Find(name) != nullptr; }
  // A tensor whose ggml shape is exactly `shape` (shape[0] contiguous).
  Expected<const GgufTensor*> Tensor(const std::string& name,
                                     const std::vector<int64_t>& shape) const;
  // W: [rows, cols] as a linear layer (ggml shape {cols, rows}).
  Expected<std::unique_ptr<kernels::LinearWeight>> Linear(const std::string& name, int64_t rows,
                                                          int64_t cols);
  // W_1 ... W_n: [rows_i, cols] fused into one linear layer [Σ rows_i, cols] (LinearWeight::
  // CreateFused) when they end up in one type with one input order (which the fused weight
  // takes); nullptr when their stored types or their orders differ (load them one by one then).
  struct FusedPart {
    std::string name;
    int64_t rows;
  };
  Expected<std::unique_ptr<kernels::LinearWeight>> FusedLinear(const std::vector<FusedPart>& parts,
                                                               int64_t cols);
  // A gated feed-forward's gate and up, [rows, cols] each, as one weight for kernels::GatedLinear
  // (LinearWeight::CreateGatedPair): from tensors `gate_name` and `up_name`, or, where there is no
  // `gate_name`, from `up_name` holding both ([2 rows, cols], gate rows first: Phi-3). nullptr
  // when gate and up are stored in different types or have different input orders (load them one
  // by one then).
  Expected<std::unique_ptr<kernels::LinearWeight>> GatedPairLinear(const std::string& gate_name,
                                                                   const std::string& up_name,
                                                                   int64_t rows, int64_t cols);
  // W_e: [rows, cols] for each of `num_experts` experts, stored as one 3-D tensor (ggml shape
  // {cols, rows, num_experts}): one linear layer per expert over its slice of the tensor's bytes.
  // Without that tensor, "<stem>_exps.weight" is read as one tensor per expert,
  // "<stem>.<e>.weight" (older Mixtral GGUF files, Hugging Face checkpoints). The 3-D tensor's
  // input order, if any, is every expert's.
  Expected<std::vector<std::unique_ptr<kernels::LinearWeight>>> ExpertLinears(
      const std::string& name, int64_t num_experts, int64_t rows, int64_t cols);
  // Each expert's gate and up ([rows, cols] each, as ExpertLinears reads them) fused into one
  // linear layer [2 rows, cols] (gate rows first); empty when their stored types or input orders
  // differ.
  Expected<std::vector<std::unique_ptr<kernels::LinearWeight>>> FusedExpertLinears(
      const std::string& gate_name, const std::string& up_name, int64_t num_experts, int64_t rows,
      int64_t cols);
  // A 1-D tensor of `size` values converted to f32.
  Expected<std::vector<float>> Vector(const std::string& name, int64_t size) const;

  // Bytes the linear layers handed out hold (their packed forms for this CPU, or their rows),
  // each read once per decoded token.
  int64_t linear_bytes() const { return linear_bytes_; }

 private:
  // The bytes of the tensor of ggml shape `shape` ({cols, rows, ...}: rows of shape[0] values) in
  // the type it is computed in: the stored bytes, or `converted` filled with them converted to
  // ConversionType(name).
  struct LinearBytes {
    GgmlType type;
    const uint8_t* data;
    std::vector<uint8_t> converted;
  };
  Expected<LinearBytes> BytesOf(const std::string& name, const std::vector<int64_t>& shape);
  // BytesOf each part ([rows, cols]) when they end up in one type with one input order, else
  // nullopt.
  Expected<std::optional<std::vector<LinearBytes>>> SameTypeBytes(
      const std::vector<FusedPart>& parts, int64_t cols);
  // The type linear weight `name` is converted to at load, or nullopt: as stored.
  std::optional<GgmlType> ConversionType(const std::string& name) const;
  // The type linear weight `tensor` (named `name`) is computed in.
  GgmlType ComputedType(const std::string& name, const GgufTensor& tensor) const {
    return ConversionType(name).value_or(tensor.type);
  }
  // Whether the linear weights `a` and `b` have the same input order (none counts as empty).
  bool SameInputOrder(const std::string& a, const std::string& b) const;
  // `weight` given tensor `name`'s input order, if the source has one; errors name the tensor.
  // Every linear weight handed out passes here, where its resident bytes are counted.
  Expected<std::unique_ptr<kernels::LinearWeight>> WithInputOrderOf(
      const std::string& name, Expected<std::unique_ptr<kernels::LinearWeight>> weight);

  const TensorSource& source_;
  std::optional<GgmlType> linear_type_;
  int64_t linear_bytes_ = 0;
};

}  // namespace vllm
