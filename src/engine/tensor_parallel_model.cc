#include "engine/tensor_parallel_model.h"

#include <cstdio>

#include "common/logging.h"
#include "engine/tensor_parallel_step.h"
#include "model/forward_batch_wire.h"

namespace vllm {

TensorParallelModel::TensorParallelModel(std::unique_ptr<Model> shard, Options options)
    : shard_(std::move(shard)), options_(std::move(options)) {
  if (options_.step_timeout.count() > 0) watch_ = std::thread([this] { WatchSteps(); });
}

TensorParallelModel::~TensorParallelModel() {
  if (watch_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(watch_mutex_);
      stopping_ = true;
    }
    watch_wake_.notify_one();
    watch_.join();
  }
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
  if (std::optional<std::string> failed = failure()) return Error{*failed};
  VLLM_RETURN_IF_ERROR(AnnounceKvStorage(kv));
  StepUnderWay step(*this);
  VLLM_RETURN_IF_ERROR(
      SendTensorParallelMessage(*options_.ranks, TensorParallelMessage::kForward, *batch_bytes));
  return shard_->Forward(batch, kv, logits);
}

Status TensorParallelModel::AnnounceKvStorage(const KvStorage& kv) {
  std::vector<uint8_t> kv_options = SerializeKvStorageOptions(kv.options());
  if (&kv == announced_kv_ && kv_options == announced_kv_options_) return Status::Ok();
  StepUnderWay step(*this);
  VLLM_RETURN_IF_ERROR(
      SendTensorParallelMessage(*options_.ranks, TensorParallelMessage::kKvStorage, kv_options));
  VLLM_RETURN_IF_ERROR(options_.ranks->Barrier());  // met once every rank made its storage
  announced_kv_ = &kv;
  announced_kv_options_ = std::move(kv_options);
  return Status::Ok();
}

std::optional<std::string> TensorParallelModel::failure() const {
  std::lock_guard<std::mutex> lock(watch_mutex_);
  return failure_;
}

TensorParallelModel::StepUnderWay::StepUnderWay(TensorParallelModel& model) : model_(model) {
  std::lock_guard<std::mutex> lock(model_.watch_mutex_);
  model_.step_started_ = Clock::now();
}

TensorParallelModel::StepUnderWay::~StepUnderWay() {
  std::lock_guard<std::mutex> lock(model_.watch_mutex_);
  model_.step_started_.reset();
}

void TensorParallelModel::WatchSteps() {
  constexpr std::chrono::milliseconds kCheckEvery{100};
  std::unique_lock<std::mutex> lock(watch_mutex_);
  while (!stopping_) {
    watch_wake_.wait_for(lock, kCheckEvery);
    if (failure_ || !step_started_ || Clock::now() - *step_started_ < options_.step_timeout) {
      continue;
    }
    char timeout[32];
    std::snprintf(timeout, sizeof(timeout), "%g", options_.step_timeout.count() / 1000.0);
    failure_ = "a step of the model's " + std::to_string(options_.ranks->size()) +
               " ranks has not finished in " + timeout +
               " s (VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS): a rank stopped answering; the job ends";
    VLLM_LOG(kError) << *failure_;
    // /health answers 503 for a while before the job goes.
    if (watch_wake_.wait_for(lock, options_.hang_exit_delay, [this] { return stopping_; })) break;
    lock.unlock();
    if (options_.on_hang) options_.on_hang();
    lock.lock();
  }
}

}  // namespace vllm
