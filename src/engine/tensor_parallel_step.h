// The messages of a tensor- or pipeline-parallel engine: rank 0 runs the scheduler, the runner and
// sampling as one process does, and before each forward broadcasts what the other ranks need to run
// their shards alongside it (TensorParallelModel sends, RunTensorParallelWorkerLoop receives):
//
//   rank 0                                   ranks 1 … N-1
//   kKvStorage (KvStorage::Options) ───────► make the KV storage (at start, and after wake-up)
//   barrier                         ◄──────► barrier (every rank's storage exists)
//   kForward (ForwardBatch)         ───────► Forward of the shard into scratch logits
//   shard Forward ◄── all-reduces, logits all-gather ──► shard Forward          (tensor parallel)
//   stage Forward ◄── residual streams, last stage's logits ──► stage Forward (pipeline parallel)
//   kShutdown                       ───────► return; every rank then finalizes MPI
//
// Each message is one broadcast of a fixed header, then one of its payload.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"
#include "dist/communicator.h"
#include "vllm/engine_args.h"

namespace vllm {

enum class TensorParallelMessage : int64_t { kKvStorage = 1, kForward = 2, kShutdown = 3 };

// From rank 0 to every other rank (a collective: they must be in ReceiveTensorParallelMessage).
Status SendTensorParallelMessage(dist::Communicator& ranks, TensorParallelMessage kind,
                                 std::span<const uint8_t> payload);

struct ReceivedTensorParallelMessage {
  TensorParallelMessage kind = TensorParallelMessage::kShutdown;
  std::vector<uint8_t> payload;
};
// On ranks other than 0: the next message. Errors on an unknown kind or a negative size.
Expected<ReceivedTensorParallelMessage> ReceiveTensorParallelMessage(dist::Communicator& ranks);

// The largest tensor- or pipeline-parallel size (and MPI job) the engine takes.
constexpr int kMaxTensorParallelSize = 64;

// vLLM's VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS (default 300): how long rank 0 waits for a step of
// the job before it counts a rank as hung; an error when the variable is not a positive number.
Expected<std::chrono::milliseconds> ExecuteModelTimeout();

// The MPI ranks `args` split the model across: tensor_parallel_size × pipeline_parallel_size.
int NumModelRanks(const EngineArgs& args);
// How the split is named: "tensor parallel" or "pipeline parallel" (as the engine's log lines
// say), and its size as a command-line flag ("-tp 2", "-pp 2").
std::string ParallelismName(const EngineArgs& args);
std::string ParallelSizeFlag(const EngineArgs& args);

// The MPI job this process is rank 0 or a worker of, for NumModelRanks(args) ranks: errors when
// this process was not started by mpirun as a job of exactly that many ranks (naming the command
// lines that start one).
Expected<dist::Communicator*> JoinModelRanks(const EngineArgs& args);

}  // namespace vllm
