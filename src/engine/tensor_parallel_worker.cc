#include "engine/tensor_parallel_worker.h"

#include <memory>
#include <vector>

#include "common/logging.h"
#include "common/thread_pool.h"
#include "dist/mpi_communicator.h"
#include "engine/engine_args_check.h"
#include "engine/engine_model.h"
#include "engine/tensor_parallel_step.h"
#include "model/forward_batch_wire.h"

namespace vllm {

Status RunTensorParallelWorkerLoop(Model& shard, dist::Communicator& ranks) {
  const ModelConfig& config = shard.config();
  std::unique_ptr<KvStorage> kv;
  std::vector<float> logits;  // [logits_indices.size(), vocab_size] of the latest step
  for (;;) {
    auto message = ReceiveTensorParallelMessage(ranks);
    if (!message) return Error{message.error()};
    switch (message->kind) {
      case TensorParallelMessage::kShutdown:
        return Status::Ok();
      case TensorParallelMessage::kKvStorage: {
        auto options = DeserializeKvStorageOptions(message->payload);
        if (!options) return Error{"tensor parallel: " + options.error()};
        options->num_kv_heads = config.num_kv_heads;
        options->head_dim = config.head_dim;
        kv.reset();  // the old storage's memory first
        auto created = KvStorage::Create(shard.KvStorageOptionsOf(*options));
        if (!created)
          return Error{"tensor parallel rank " + std::to_string(ranks.rank()) + ": " +
                       created.error()};
        kv = std::move(*created);
        VLLM_RETURN_IF_ERROR(ranks.Barrier());  // rank 0 waits for every rank's storage
        break;
      }
      case TensorParallelMessage::kForward: {
        auto wire = DeserializeForwardBatch(message->payload);
        if (!wire) return Error{"tensor parallel: " + wire.error()};
        if (kv == nullptr) return Error{"tensor parallel: a forward before the KV storage's shape"};
        logits.resize(wire->batch.logits_indices.size() * static_cast<size_t>(config.vocab_size));
        Status forward = shard.Forward(wire->batch, *kv, logits.data());
        if (!forward.ok()) {
          VLLM_LOG(kWarning) << "tensor parallel rank " << ranks.rank() << ": "
                             << forward.message();
        }
        break;
      }
    }
  }
}

Status RunTensorParallelWorker(const EngineArgs& args) {
  VLLM_RETURN_IF_ERROR(CheckEngineArgs(args));
  auto ranks = JoinModelRanks(args);
  if (!ranks) return Error{ranks.error()};
  ThreadPool pool(ThreadPool::Options{.num_threads = args.num_threads});
  auto model = LoadEngineModel(args, &pool, *ranks);
  if (!model) return Error{model.error()};
  VLLM_LOG(kInfo) << ParallelismName(args) << " rank " << (*ranks)->rank() << " of "
                  << (*ranks)->size() << ": shard loaded, " << pool.num_threads() << " threads";
  VLLM_RETURN_IF_ERROR((*ranks)->Barrier());  // met by rank 0 once its shard is loaded
  VLLM_RETURN_IF_ERROR(RunTensorParallelWorkerLoop(*model->loaded.model, **ranks));
  auto world = dist::MpiCommunicator::World();
  if (world) (*world)->FinalizeAtExit();
  return Status::Ok();
}

}  // namespace vllm
