// Where a model's weights come from. Architectures ask for tensors by llama.cpp's GGUF names
// (token_embd.weight, blk.N.attn_q.weight, ...) and get GGUF-style descriptions (ggml shape
// order: shape[0] contiguous); a source for another format maps names and shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/gguf_file.h"

namespace vllm {

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // The tensor with this GGUF name, or nullptr. The description outlives the source only for
  // sources that say so (the GGUF one points into its file).
  virtual const GgufTensor* Find(const std::string& gguf_name) const = 0;
  // The input order of the linear weight with this GGUF name (kernels::LinearWeight::
  // WithInputOrder: GPTQ desc_act, compressed-tensors actorder), or nullptr where its columns are
  // in order. Lives as long as the source.
  virtual const std::vector<int32_t>* InputOrder(const std::string& gguf_name) const {
    return nullptr;
  }
  // Whether the linear weight with this GGUF name was converted from a quantized checkpoint's
  // layer (GPTQ, AWQ, FP8, ...): it keeps its type whatever type the loader converts the other
  // linear weights to, as vLLM's --dtype sets only activations' and unquantized weights' dtype.
  virtual bool IsQuantizedLinear(const std::string& gguf_name) const { return false; }
};

// A GGUF file's own tensors; descriptions live as long as the file.
class GgufTensorSource : public TensorSource {
 public:
  explicit GgufTensorSource(const GgufFile& file) : file_(file) {}
  const GgufTensor* Find(const std::string& gguf_name) const override {
    return file_.FindTensor(gguf_name);
  }

 private:
  const GgufFile& file_;
};

}  // namespace vllm
