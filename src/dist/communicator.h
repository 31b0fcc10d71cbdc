// The collective operations tensor- and pipeline-parallel ranks use, over one group of ranks.
// Implementations: MPI (Open MPI, across processes and hosts) and threads in one process (tests).
// Every call is collective: all ranks of the group make the same calls in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/expected.h"

namespace vllm::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;  // 0 … size() - 1
  virtual int size() const = 0;

  // values: [count] on every rank; afterwards each holds the element-wise sum over ranks, summed
  // in rank order 0, 1, … so every rank gets the same bits whatever the transport.
  virtual Status AllReduceSum(float* values, int64_t count) = 0;
  // bytes: [num_bytes] on every rank; afterwards each holds root's.
  virtual Status Broadcast(void* bytes, int64_t num_bytes, int root) = 0;
  // mine: [bytes_per_rank] → all: [size(), bytes_per_rank], rank r's bytes at r * bytes_per_rank.
  virtual Status AllGather(const void* mine, int64_t bytes_per_rank, void* all) = 0;
  // Point to point (pipeline stages): the receiver knows num_bytes.
  virtual Status Send(const void* bytes, int64_t num_bytes, int dest_rank) = 0;
  virtual Status Receive(void* bytes, int64_t num_bytes, int source_rank) = 0;
  virtual Status Barrier() = 0;
  // The ranks of this group that give the same `color`, in rank order, as a group of their own
  // (MPI_Comm_split; a collective call). The default has none: thread groups are made as they are
  // needed (CreateThreadCommunicators).
  virtual Expected<std::unique_ptr<Communicator>> Split(int /*color*/) {
    return Error{"this communicator cannot be split"};
  }
};

}  // namespace vllm::dist
