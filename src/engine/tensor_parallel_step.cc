#include "engine/tensor_parallel_step.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "dist/mpi_communicator.h"
#include "dist/mpi_world.h"

namespace vllm {
namespace {

struct MessageHeader {
  int64_t kind = 0;
  int64_t num_bytes = 0;
};

}  // namespace

Status SendTensorParallelMessage(dist::Communicator& ranks, TensorParallelMessage kind,
                                 std::span<const uint8_t> payload) {
  MessageHeader header{.kind = static_cast<int64_t>(kind),
                       .num_bytes = static_cast<int64_t>(payload.size())};
  VLLM_RETURN_IF_ERROR(ranks.Broadcast(&header, sizeof(header), 0));
  if (payload.empty()) return Status::Ok();
  // Broadcast writes on receivers only; the root's bytes are read.
  return ranks.Broadcast(const_cast<uint8_t*>(payload.data()), header.num_bytes, 0);
}

Expected<ReceivedTensorParallelMessage> ReceiveTensorParallelMessage(dist::Communicator& ranks) {
  MessageHeader header;
  VLLM_RETURN_IF_ERROR(ranks.Broadcast(&header, sizeof(header), 0));
  if (header.kind < static_cast<int64_t>(TensorParallelMessage::kKvStorage) ||
      header.kind > static_cast<int64_t>(TensorParallelMessage::kShutdown) ||
      header.num_bytes < 0) {
    return Error{"tensor parallel: malformed message from rank 0 (kind " +
                 std::to_string(header.kind) + ", " + std::to_string(header.num_bytes) + " bytes)"};
  }
  ReceivedTensorParallelMessage message{.kind = static_cast<TensorParallelMessage>(header.kind)};
  message.payload.resize(static_cast<size_t>(header.num_bytes));
  if (header.num_bytes > 0) {
    VLLM_RETURN_IF_ERROR(ranks.Broadcast(message.payload.data(), header.num_bytes, 0));
  }
  return message;
}

Expected<std::chrono::milliseconds> ExecuteModelTimeout() {
  constexpr double kDefaultSeconds = 300;  // vLLM's
  const char* text = std::getenv("VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS");
  if (text == nullptr)
    return std::chrono::milliseconds(static_cast<int64_t>(kDefaultSeconds * 1e3));
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds > 0) || seconds > 1e9) {
    return Error{"VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS='" + std::string(text) +
                 "': expected a positive number of seconds"};
  }
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1e3)));
}

int NumModelRanks(const EngineArgs& args) {
  return args.tensor_parallel_size * args.pipeline_parallel_size;
}

std::string ParallelismName(const EngineArgs& args) {
  if (args.pipeline_parallel_size == 1) return "tensor parallel";
  return args.tensor_parallel_size == 1 ? "pipeline parallel" : "tensor and pipeline parallel";
}

std::string ParallelSizeFlag(const EngineArgs& args) {
  const std::string tp = "-tp " + std::to_string(args.tensor_parallel_size);
  const std::string pp = "-pp " + std::to_string(args.pipeline_parallel_size);
  if (args.pipeline_parallel_size == 1) return tp;
  return args.tensor_parallel_size == 1 ? pp : tp + " " + pp;
}

Expected<dist::Communicator*> JoinModelRanks(const EngineArgs& args) {
  const std::string size = std::to_string(NumModelRanks(args));
  // How the sizes were asked for: "tensor_parallel_size 2 " and the like.
  std::string field;
  if (args.tensor_parallel_size > 1) {
    field = "tensor_parallel_size " + std::to_string(args.tensor_parallel_size) + " ";
  }
  if (args.pipeline_parallel_size > 1) {
    field += (field.empty() ? "" : "x ") + std::string("pipeline_parallel_size ") +
             std::to_string(args.pipeline_parallel_size) + " ";
  }
  const std::string flag = ParallelSizeFlag(args);
  auto world = dist::MpiWorldFromEnvironment();
  if (!world) return Error{world.error()};
  if (!world->has_value()) {
    return Error{
        field + "runs as " + size + " MPI ranks: `vllm-cpp serve|generate|chat|bench MODEL " +
        flag + "` starts them on this host, `mpirun -H host1,host2 -np " + size +
        " vllm-cpp serve MODEL " + flag + "` across hosts; this process was not started by either"};
  }
  if ((*world)->size != NumModelRanks(args)) {
    return Error{field + "needs an MPI job of " + size + " ranks; mpirun started " +
                 std::to_string((*world)->size)};
  }
  auto communicator = dist::MpiCommunicator::World();
  if (!communicator) return Error{communicator.error()};
  return static_cast<dist::Communicator*>(*communicator);
}

}  // namespace vllm
