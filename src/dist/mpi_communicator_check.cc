// MpiCommunicator's collectives on the ranks mpirun starts (ctest runs it as 2 and 3 ranks, over
// shared memory and over TCP): each rank computes what every rank holds, so it can check the
// exact bits it receives. Exit 0 when every check passes on this rank. With --bench, rank 0
// prints the median latency of AllReduceSum per call for a few row widths.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dist/mpi_communicator.h"

namespace vllm::dist {
namespace {

int failures = 0;

void Expect(bool ok, const std::string& what, int rank) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  ++failures;
}

void ExpectOk(const Status& status, const std::string& what, int rank) {
  Expect(status.ok(), what + (status.ok() ? "" : ": " + status.message()), rank);
}

// Rank r's i-th value: magnitudes far apart, so a sum in another order than 0, 1, 2, … rounds
// differently for 3 ranks or more.
float ValueOf(int rank, int64_t i) {
  const float scale = rank % 3 == 0 ? 1e8f : (rank % 3 == 1 ? 1.f : -1e8f);
  return scale * (1.f + static_cast<float>(i % 7) / 3.f) + static_cast<float>(rank) * 0.37f;
}

void CheckAllReduce(MpiCommunicator& comm, int64_t count) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = ValueOf(comm.rank(), i);
  ExpectOk(comm.AllReduceSum(values.data(), count), "AllReduceSum", comm.rank());
  bool rank_ordered = true;
  for (int64_t i = 0; i < count; ++i) {
    float sum = ValueOf(0, i);
    for (int r = 1; r < comm.size(); ++r) sum += ValueOf(r, i);
    rank_ordered = rank_ordered && std::memcmp(&sum, &values[i], sizeof(float)) == 0;
  }
  Expect(rank_ordered, "AllReduceSum of " + std::to_string(count) + " is the rank-ordered sum",
         comm.rank());
}

void CheckBroadcastAndGather(MpiCommunicator& comm) {
  const int last = comm.size() - 1;
  std::vector<uint8_t> bytes(100003, static_cast<uint8_t>(comm.rank()));
  ExpectOk(comm.Broadcast(bytes.data(), static_cast<int64_t>(bytes.size()), last), "Broadcast",
           comm.rank());
  Expect(std::all_of(bytes.begin(), bytes.end(), [last](uint8_t b) { return b == last; }),
         "Broadcast gives the root's bytes", comm.rank());
  ExpectOk(comm.Broadcast(nullptr, 0, 0), "an empty Broadcast", comm.rank());
  const Status bad_root = comm.Broadcast(bytes.data(), 1, comm.size());
  Expect(!bad_root.ok() && bad_root.message().find("outside") != std::string::npos,
         "a root outside the job is an error", comm.rank());

  const int32_t mine[2] = {comm.rank(), -comm.rank()};
  std::vector<int32_t> all(2 * comm.size(), 99);
  ExpectOk(comm.AllGather(mine, sizeof(mine), all.data()), "AllGather", comm.rank());
  for (int r = 0; r < comm.size(); ++r) {
    Expect(all[2 * r] == r && all[2 * r + 1] == -r, "AllGather puts rank r's at r", comm.rank());
  }
}

void CheckPointToPoint(MpiCommunicator& comm) {
  // A ring: each rank sends to the next and receives from the previous (even ranks send first).
  const int next = (comm.rank() + 1) % comm.size();
  const int previous = (comm.rank() + comm.size() - 1) % comm.size();
  std::vector<int64_t> sent(1000, comm.rank());
  std::vector<int64_t> received(1000, -1);
  const int64_t num_bytes = static_cast<int64_t>(sent.size() * sizeof(int64_t));
  if (comm.rank() % 2 == 0) {
    ExpectOk(comm.Send(sent.data(), num_bytes, next), "Send", comm.rank());
    ExpectOk(comm.Receive(received.data(), num_bytes, previous), "Receive", comm.rank());
  } else {
    ExpectOk(comm.Receive(received.data(), num_bytes, previous), "Receive", comm.rank());
    ExpectOk(comm.Send(sent.data(), num_bytes, next), "Send", comm.rank());
  }
  Expect(std::all_of(received.begin(), received.end(),
                     [previous](int64_t v) { return v == previous; }),
         "Receive gets the previous rank's bytes", comm.rank());
}

void Bench(MpiCommunicator& comm) {
  for (int64_t count : {int64_t{64}, int64_t{2048}, int64_t{4096}, int64_t{8192}}) {
    std::vector<float> values(count, 1.f);
    std::vector<double> micros;
    for (int i = 0; i < 2000; ++i) {
      const auto start = std::chrono::steady_clock::now();
      if (!comm.AllReduceSum(values.data(), count).ok()) return;
      micros.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(micros.begin(), micros.end());
    if (comm.rank() == 0) {
      std::printf("all-reduce of %ld floats over %d ranks: median %.2f us, p90 %.2f us\n",
                  static_cast<long>(count), comm.size(), micros[micros.size() / 2],
                  micros[micros.size() * 9 / 10]);
    }
  }
}

int Run(bool bench) {
  auto world = MpiCommunicator::World();
  if (!world) {
    std::fprintf(stderr, "%s\n", world.error().c_str());
    return 1;
  }
  MpiCommunicator& comm = **world;
  if (bench) {
    Bench(comm);
  } else {
    for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1} << 20}) {
      CheckAllReduce(comm, count);
    }
    CheckBroadcastAndGather(comm);
    CheckPointToPoint(comm);
    ExpectOk(comm.Barrier(), "Barrier", comm.rank());
  }
  if (failures > 0) return 1;  // exits without finalizing: MPI_Abort ends every rank
  comm.FinalizeAtExit();
  if (comm.rank() == 0) std::printf("ok: %d ranks\n", comm.size());
  return 0;
}

}  // namespace
}  // namespace vllm::dist

int main(int argc, char** argv) {
  return vllm::dist::Run(argc > 1 && std::string(argv[1]) == "--bench");
}
