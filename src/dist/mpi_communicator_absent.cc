// MpiCommunicator in a build without Open MPI (the aarch64 cross build, whose tests run one
// process under qemu): World() refuses, so no instance exists and the collectives below are never
// reached; tensor parallelism says what to install.
#include <cstdlib>

#include "dist/mpi_communicator.h"

namespace vllm::dist {

struct MpiCommunicator::State {};

namespace {
Error NoMpi() {
  return Error{
      "this vllm-cpp was built without Open MPI, which tensor parallelism needs: install "
      "openmpi-bin and libopenmpi-dev (scripts/setup.sh) and rebuild"};
}
}  // namespace

Expected<MpiCommunicator*> MpiCommunicator::World() { return NoMpi(); }
MpiCommunicator::~MpiCommunicator() = default;
Status MpiCommunicator::AllReduceSum(float*, int64_t) { return NoMpi(); }
Status MpiCommunicator::Broadcast(void*, int64_t, int) { return NoMpi(); }
Status MpiCommunicator::AllGather(const void*, int64_t, void*) { return NoMpi(); }
Status MpiCommunicator::Send(const void*, int64_t, int) { return NoMpi(); }
Status MpiCommunicator::Receive(void*, int64_t, int) { return NoMpi(); }
Status MpiCommunicator::Barrier() { return NoMpi(); }
Expected<std::unique_ptr<Communicator>> MpiCommunicator::Split(int) { return NoMpi(); }
void MpiCommunicator::FinalizeAtExit() {}
void MpiCommunicator::Abort(int exit_code) { std::exit(exit_code); }

}  // namespace vllm::dist
