// The model interface: a forward pass over a ForwardBatch that reads and writes paged KV storage
// and returns logits for the requested rows. The model knows tensors, never requests.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "formats/gguf_file.h"
#include "model/forward_batch.h"
#include "model/kv_storage.h"
#include "model/model_config.h"
#include "model/pooler_config_flag.h"

namespace vllm {

namespace dist {
class Communicator;
}  // namespace dist

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelConfig& config() const = 0;

  // Runs the batch. Writes K/V of every batch token at its slot, then fills
  // logits: [batch.logits_indices.size(), vocab_size]. Errors on an inconsistent batch.
  virtual Status Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) = 0;

  // Pooling: the last hidden states of every batch token (decoders: after the final norm), for
  // the pooler. hidden: [batch.num_tokens(), hidden_size]. Errors when the model has none.
  virtual Status ForwardHidden(const ForwardBatch& /*batch*/, KvStorage& /*kv*/,
                               float* /*hidden*/) {
    return Error{"model " + config().architecture + " cannot return hidden states"};
  }
  // Embedders with sentence-transformers Dense modules after pooling (EmbeddingGemma): pooled:
  // [num_rows, hidden_size] projected in place (the last module's width is hidden_size). The
  // default has none.
  virtual Status ProjectPooled(float* /*pooled*/, int64_t /*num_rows*/) const {
    return Status::Ok();
  }
  // Sequence classification: the head over pooled vectors (config().num_labels > 0).
  // pooled: [num_rows, hidden_size] → scores: [num_rows, num_labels] (raw logits).
  virtual Status Classify(const float* /*pooled*/, int64_t /*num_rows*/, float* /*scores*/) const {
    return Error{"model " + config().architecture + " has no classification head"};
  }

  // The KV storage this model keeps when `whole` shapes one for every layer (a pipeline stage:
  // blocks of its own layers only, StageKvCacheLayout). The default keeps `whole`.
  virtual KvStorage::Options KvStorageOptionsOf(const KvStorage::Options& whole) const {
    return whole;
  }

  // Why the model can run no more steps (a rank of its parallel job stopped answering), once it
  // is so; nullopt while it runs. Safe to call from any thread.
  virtual std::optional<std::string> failure() const { return std::nullopt; }

  // Whether Forward honours ForwardBatch::input_embeds (prompt embeddings).
  virtual bool accepts_input_embeds() const { return false; }

  // Bytes of weights read per token at batch size 1 (for roofline figures).
  virtual int64_t weight_bytes() const = 0;
};

struct ModelLoadOptions {
  ThreadPool* pool = nullptr;  // required; shared with the caller
  // When set, linear weights stored in another type are converted to this one at load (vLLM's
  // --dtype float32|bfloat16|float16, or --quantization q8_0); the layers of a quantized
  // checkpoint keep the type they were converted to (TensorSource::IsQuantizedLinear).
  std::optional<GgmlType> linear_type;
  // The engine's --max-model-len (0: the model's context length). Phi-3's LongRoPE rotates every
  // position with its long factors when this exceeds the pretraining context, and with its short
  // ones otherwise, as vLLM does (so keys never change factors as a sequence grows).
  int64_t max_model_len = 0;
  // vLLM's --pooler-config, replacing the pooling the model's files set.
  PoolerConfigFlag pooler_config_flag;
  // vLLM's --hf-config-path: the directory whose config.json describes a model directory's
  // weights instead of its own (empty: the model's). LoadModelFromPath refuses it for GGUF.
  std::string hf_config_dir;
  // Tensor parallel (--tensor-parallel-size): this rank's shard of a decoder (tensor_parallel.h),
  // whose config() is the rank-local one and whose Forward makes the group's collectives, so every
  // rank calls Forward with the same batches. Null or a group of one: the whole model. Pooling
  // models refuse it; it must outlive the model.
  dist::Communicator* tensor_parallel = nullptr;
  // Pipeline parallel (--pipeline-parallel-size): this rank's stage of a decoder
  // (pipeline_parallel.h), rank r of the group running stage r; every rank calls Forward with the
  // same batches and the first stage's logits are the model's. Null or a group of one: every
  // layer. Pooling models refuse it; it must outlive the model. With tensor_parallel too, each
  // stage is split across that group (the ranks of one stage).
  dist::Communicator* pipeline_parallel = nullptr;
  // vLLM's VLLM_PP_LAYER_PARTITION: the stages' layer counts ("4,4"); empty: vLLM's even split.
  std::string pipeline_layer_partition;
};

class TensorSource;

// Builds the model `config.architecture` names from `source`, whose tensors' bytes (and, for
// sources other than GGUF, the source itself) must outlive the model.
Expected<std::unique_ptr<Model>> LoadModel(const TensorSource& source, const ModelConfig& config,
                                           const ModelLoadOptions& options);

// Builds the model named by general.architecture from a parsed GGUF file that must outlive it.
Expected<std::unique_ptr<Model>> LoadModelFromGguf(const GgufFile& file,
                                                   const ModelLoadOptions& options);

}  // namespace vllm
