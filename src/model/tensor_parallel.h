// Tensor parallelism of a decoder, the model side (vLLM's column- and row-parallel linear layers):
// rank r of N holds
//   - attention heads [r H/N, (r+1) H/N): its rows of attn_q (and of attn_qkv's q part) and the
//     rows of the KV heads those heads read (KV heads split when N divides them, else each rank
//     takes the one its heads map to, replicated: vLLM's rule), with their biases and sinks;
//     attn_output's columns of its heads (row-parallel: a partial sum, all-reduced);
//   - FFN rows [r F/N, (r+1) F/N) of gate and up (Phi-3's fused ffn_up: of both halves) and those
//     columns of down (all-reduced); each expert of a mixture likewise, the router whole;
//   - vocabulary rows [r P, (r+1) P), P = ceil(V / N), of token_embd and the output head.
// TensorParallelSource hands those slices to the layers under the tensors' own names with shapes
// of the rank-local config (TensorParallelConfig), so the layers load them as a smaller model:
//
//     attn_q / ffn_gate {hidden, rows}       attn_output / ffn_down {cols, hidden}
//     ┌──────────────┐ rank 0's rows          ┌───────┬───────┐
//     ├──────────────┤ rank 1's rows          │rank 0 │rank 1 │ columns of each row
//     └──────────────┘ (one byte range)       └───────┴───────┘ (a byte range per row)
//
// A row slice is a view into the source's bytes; a column slice is copied (its columns must fill
// whole blocks of the weight type) and the source's pages of the whole tensor are released.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "model/model_config.h"
#include "model/tensor_source.h"

namespace vllm {

namespace dist {
class Communicator;
}  // namespace dist

// A rank's share of the vocabulary: rows [begin, begin + num_rows) of the embedding and the head;
// each rank's logits are padded to padded_rows (= ceil(vocab / size)) for an equal-sized gather.
struct VocabShard {
  int64_t begin = 0;
  int64_t num_rows = 0;
  int64_t padded_rows = 0;
};
VocabShard VocabShardOf(int64_t vocab_size, int rank, int size);

// The config of rank `rank`'s shard of `whole` over `size` ranks: num_heads / size, the local KV
// heads, intermediate_size / size (experts' too); vocab_size stays the whole one. Errors name the
// sizes that do not divide.
Expected<ModelConfig> TensorParallelConfig(const ModelConfig& whole, int rank, int size);

class TensorParallelSource : public TensorSource {
 public:
  // Checks that the model can be split: the sizes divide (TensorParallelConfig), every column
  // slice fills whole blocks of its tensor's type, no column-sliced weight has an input order.
  static Expected<std::unique_ptr<TensorParallelSource>> Create(const TensorSource& whole,
                                                                const ModelConfig& config, int rank,
                                                                int size);

  const ModelConfig& local_config() const { return local_; }
  const VocabShard& vocab() const { return vocab_; }

  // The rank's slice of a sharded tensor (made at the first call), or the source's tensor.
  const GgufTensor* Find(const std::string& gguf_name) const override;
  const std::vector<int32_t>* InputOrder(const std::string& gguf_name) const override {
    return whole_.InputOrder(gguf_name);  // only row slices keep one (Create)
  }
  bool IsQuantizedLinear(const std::string& gguf_name) const override {
    return whole_.IsQuantizedLinear(gguf_name);
  }

  // Frees the copied slices (the layers hold packed copies of them by now); views stay. A later
  // Find copies again.
  void ReleaseCopies();

 private:
  // Rows [begin, begin + count) of each expert's (or the matrix's) rows.
  struct RowRange {
    int64_t begin, count;
  };
  // How one tensor is sliced: rows (ranges concatenated), columns, or hidden from this rank.
  struct Slicing {
    enum Kind { kWhole, kRows, kColumns, kHidden } kind = kWhole;
    std::vector<RowRange> rows;            // kRows
    int64_t col_begin = 0, col_count = 0;  // kColumns
  };
  struct Slice {
    GgufTensor tensor;
    std::vector<uint8_t> bytes;  // a copied slice's; empty for a view
  };

  TensorParallelSource(const TensorSource& whole, const ModelConfig& config, int rank, int size,
                       ModelConfig local);
  Slicing SlicingOf(const std::string& gguf_name, const GgufTensor& tensor) const;
  Expected<Slice> MakeSlice(const GgufTensor& tensor, const Slicing& slicing) const;

  const TensorSource& whole_;
  const ModelConfig whole_config_;
  const int rank_, size_;
  const ModelConfig local_;
  const VocabShard vocab_;
  mutable std::map<std::string, Slice> slices_;
};

}  // namespace vllm
