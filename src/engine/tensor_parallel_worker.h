// Ranks 1 … N-1 of a tensor-parallel engine: no scheduler, runner or server, only this rank's
// shard, run for every step rank 0's TensorParallelModel sends (tensor_parallel_step.h).
#pragma once

#include "common/expected.h"
#include "dist/communicator.h"
#include "model/model.h"
#include "vllm/engine_args.h"

namespace vllm {

// Runs `shard` for each step until rank 0 sends the stop message (then Ok). The KV storage is
// shaped as rank 0's, with this shard's KV heads; the logits, which every shard's Forward ends
// with, go to a scratch buffer. Errors on a malformed message, a storage that cannot be made or
// a failed collective: the caller then ends the job. A Forward error is logged and the loop goes
// on: the shards validate the batch before any collective, so rank 0's fails alike and reports.
Status RunTensorParallelWorkerLoop(Model& shard, dist::Communicator& ranks);

// A worker rank of `vllm-cpp serve|generate|chat|bench ... -tp N`: joins the MPI job, loads its
// shard from `args` as LLMEngine loads rank 0's, runs the loop, and after a clean stop lets MPI
// finalize at exit.
Status RunTensorParallelWorker(const EngineArgs& args);

}  // namespace vllm
