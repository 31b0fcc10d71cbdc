// Rank 0's model in a tensor- or pipeline-parallel engine: the engine, the runner and the sampler
// use it as any Model, and each Forward first sends the step to the other ranks
// (tensor_parallel_step.h), then runs rank 0's shard (or first stage), which ends with the whole
// vocabulary's logits on rank 0.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "dist/communicator.h"
#include "model/model.h"

namespace vllm {

class TensorParallelModel final : public Model {
 public:
  struct Options {
    dist::Communicator* ranks = nullptr;  // required; this process is its rank 0
    // Called once the other ranks were told to stop (MPI: finalize at exit).
    std::function<void()> on_workers_stopped;
  };
  // `shard`: rank 0's shard, loaded with ModelLoadOptions::tensor_parallel = options.ranks.
  TensorParallelModel(std::unique_ptr<Model> shard, Options options);
  // Sends the stop message (the ranks leave RunTensorParallelWorkerLoop).
  ~TensorParallelModel() override;

  const ModelConfig& config() const override { return shard_->config(); }
  // Sends the KV storage's shape when it is new to the ranks (AnnounceKvStorage), then the
  // batch, then runs the shard. A batch that cannot be sent (a LoRA adapter) is an error before
  // anything is sent.
  Status Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) override;
  // Has the other ranks make their KV storage shaped as `kv` unless they hold one already, and
  // returns once they have: the engine calls it once its storage exists, so that the first step
  // does not wait for theirs.
  Status AnnounceKvStorage(const KvStorage& kv);
  KvStorage::Options KvStorageOptionsOf(const KvStorage::Options& whole) const override {
    return shard_->KvStorageOptionsOf(whole);
  }
  bool accepts_input_embeds() const override { return shard_->accepts_input_embeds(); }
  int64_t weight_bytes() const override { return shard_->weight_bytes(); }

 private:
  std::unique_ptr<Model> shard_;
  Options options_;
  // The storage whose shape the ranks hold (address and wire form): a new one is sent again.
  const KvStorage* announced_kv_ = nullptr;
  std::vector<uint8_t> announced_kv_options_;
};

}  // namespace vllm
