// The Communicator over Open MPI: the ranks of the job mpirun started (one host or several), over
// whatever transport Open MPI picks (shared memory on one host, TCP between hosts; the OMPI_MCA_btl
// variables force one). MPI starts on first use and stops when the process exits.
#pragma once

#include <memory>
#include <vector>

#include "dist/communicator.h"

namespace vllm::dist {

class MpiCommunicator final : public Communicator {
 public:
  // Every rank of the job (MPI_COMM_WORLD). The first call starts MPI (MPI_THREAD_SERIALIZED:
  // any thread may call, one at a time); the communicator lives until the process exits.
  static Expected<MpiCommunicator*> World();
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Bit-identical on every rank: with 2 ranks MPI's sum (a + b = b + a in IEEE arithmetic), with
  // more every rank's values gathered and summed in rank order.
  Status AllReduceSum(float* values, int64_t count) override;
  // Waits spinning briefly, then sleeping in short steps: a rank idle between steps does not hold
  // a core.
  Status Broadcast(void* bytes, int64_t num_bytes, int root) override;
  Status AllGather(const void* mine, int64_t bytes_per_rank, void* all) override;
  Status Send(const void* bytes, int64_t num_bytes, int dest_rank) override;
  Status Receive(void* bytes, int64_t num_bytes, int source_rank) override;
  Status Barrier() override;
  Expected<std::unique_ptr<Communicator>> Split(int color) override;

  // Once every rank has agreed to stop (and will finalize too): MPI_Finalize at exit. A process
  // that exits without it aborts the whole job (MPI_Abort) rather than wait in MPI_Finalize for
  // ranks that never get there, so one rank's failure ends every rank at once.
  void FinalizeAtExit();
  // Ends every rank of the job now with `exit_code` (mpirun reports it).
  [[noreturn]] void Abort(int exit_code);

  struct State;  // MPI's handles (mpi.h stays out of this header)

 private:
  MpiCommunicator(std::unique_ptr<State> state, int rank, int size);
  // The communicator over `state`'s MPI communicator, made to return its errors.
  static Expected<std::unique_ptr<MpiCommunicator>> Adopt(std::unique_ptr<State> state);
  Status CheckRank(int rank, const char* what) const;

  std::unique_ptr<State> state_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<float> gathered_;  // AllReduceSum's [size, count] scratch (more than 2 ranks)
};

}  // namespace vllm::dist
