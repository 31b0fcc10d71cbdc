#include "engine/tensor_parallel_model.h"

#include "common/logging.h"
#include "engine/tensor_parallel_step.h"
#include "model/forward_batch_wire.h"

namespace vllm {

TensorParallelModel::TensorParallelModel(std::unique_ptr<Model> shard, Options options)
    : shard_(std::move(shard)), options_(std::move(options)) {}

TensorParallelModel::~TensorParallelModel() {
  Status stopped = SendTensorParallelMessage(*options_.ranks, TensorParallelMessage::kShutdown, {});
  if (!stopped.ok()) {
    VLLM_LOG(kError) << "tensor parallel: could not stop the other ranks: " << stopped.message();
    return;
  }
  if (options_.on_workers_stopped) options_.on_workers_stopped();
}

Status TensorParallelModel::Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) {
  auto batch_bytes = SerializeForwardBatch(batch);
  if (!batch_bytes) return Error{batch_bytes.error()};
  VLLM_RETURN_IF_ERROR(AnnounceKvStorage(kv));
  VLLM_RETURN_IF_ERROR(
      SendTensorParallelMessage(*options_.ranks, TensorParallelMessage::kForward, *batch_bytes));
  return shard_->Forward(batch, kv, logits);
}

Status TensorParallelModel::AnnounceKvStorage(const KvStorage& kv) {
  std::vector<uint8_t> kv_options = SerializeKvStorageOptions(kv.options());
  if (&kv == announced_kv_ && kv_options == announced_kv_options_) return Status::Ok();
  VLLM_RETURN_IF_ERROR(
      SendTensorParallelMessage(*options_.ranks, TensorParallelMessage::kKvStorage, kv_options));
  VLLM_RETURN_IF_ERROR(options_.ranks->Barrier());  // met once every rank made its storage
  announced_kv_ = &kv;
  announced_kv_options_ = std::move(kv_options);
  return Status::Ok();
}

}  // namespace vllm
