#include "dist/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace vllm::dist {

struct MpiCommunicator::State {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of MPI_COMM_WORLD that returns its errors
};

namespace {

// MPI counts are ints: larger buffers go in pieces of this many elements.
constexpr int64_t kMaxElementsPerCall = int64_t{1} << 30;

// Calls piece_fn(done, piece) over [0, count) in pieces of at most kMaxElementsPerCall elements,
// stopping at the first error.
template <typename PieceFn>
Status ForEachPiece(int64_t count, PieceFn piece_fn) {
  for (int64_t done = 0; done < count; done += kMaxElementsPerCall) {
    VLLM_RETURN_IF_ERROR(
        piece_fn(done, static_cast<int>(std::min(count - done, kMaxElementsPerCall))));
  }
  return Status::Ok();
}

// Whether MPI_Finalize runs at exit (set once every rank agreed to stop); else MPI_Abort.
bool finalize_at_exit = false;

Status Check(int code, const char* what) {
  if (code == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Error{std::string("MPI ") + what + " failed: " + std::string(text, length)};
}

void EndMpiAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (finalize_at_exit) {
    MPI_Finalize();
  } else {
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// Completes `request`, spinning for the first kSpinTime (a collective inside a step completes
// within it), then sleeping kSleepStep between tests (a worker waiting for the next step).
Status Wait(MPI_Request* request, const char* what) {
  constexpr auto kSpinTime = std::chrono::milliseconds(2);
  constexpr auto kSleepStep = std::chrono::microseconds(100);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    VLLM_RETURN_IF_ERROR(Check(MPI_Test(request, &done, MPI_STATUS_IGNORE), what));
    if (done) return Status::Ok();
    if (std::chrono::steady_clock::now() - start > kSpinTime)
      std::this_thread::sleep_for(kSleepStep);
  }
}

}  // namespace

MpiCommunicator::MpiCommunicator(std::unique_ptr<State> state, int rank, int size)
    : state_(std::move(state)), rank_(rank), size_(size) {}

MpiCommunicator::~MpiCommunicator() = default;

Expected<MpiCommunicator*> MpiCommunicator::World() {
  static std::mutex mutex;
  static MpiCommunicator* world = nullptr;  // lives until exit: MPI ends in EndMpiAtExit
  std::lock_guard<std::mutex> lock(mutex);
  if (world != nullptr) return world;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Ranks that wait in a collective yield their core instead of spinning on it: on a host
    // whose cores are all busy (or shared with other work), a spinning rank holds the core the
    // rank it waits for needs, and a decode step of TinyLlama on two busy cores took 7x longer.
    // The environment's own setting wins.
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided = 0;
    VLLM_RETURN_IF_ERROR(
        Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "init"));
    std::atexit(EndMpiAtExit);
    if (provided < MPI_THREAD_SERIALIZED) {
      return Error{"MPI init: this Open MPI gives no MPI_THREAD_SERIALIZED support"};
    }
  }
  auto state = std::make_unique<State>();
  VLLM_RETURN_IF_ERROR(Check(MPI_Comm_dup(MPI_COMM_WORLD, &state->comm), "communicator dup"));
  auto adopted = Adopt(std::move(state));
  if (!adopted) return Error{adopted.error()};
  world = adopted->release();
  return world;
}

Expected<std::unique_ptr<MpiCommunicator>> MpiCommunicator::Adopt(std::unique_ptr<State> state) {
  VLLM_RETURN_IF_ERROR(
      Check(MPI_Comm_set_errhandler(state->comm, MPI_ERRORS_RETURN), "error handler"));
  int rank = 0;
  int size = 1;
  VLLM_RETURN_IF_ERROR(Check(MPI_Comm_rank(state->comm, &rank), "rank"));
  VLLM_RETURN_IF_ERROR(Check(MPI_Comm_size(state->comm, &size), "size"));
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(std::move(state), rank, size));
}

Status MpiCommunicator::CheckRank(int rank, const char* what) const {
  if (rank >= 0 && rank < size_) return Status::Ok();
  return Error{std::string("MPI ") + what + ": rank " + std::to_string(rank) + " is outside 0.." +
               std::to_string(size_ - 1)};
}

Status MpiCommunicator::AllReduceSum(float* values, int64_t count) {
  if (count < 0) return Error{"MPI all-reduce: negative count"};
  if (size_ == 1 || count == 0) return Status::Ok();
  if (size_ == 2) {
    return ForEachPiece(count, [&](int64_t done, int piece) -> Status {
      return Check(
          MPI_Allreduce(MPI_IN_PLACE, values + done, piece, MPI_FLOAT, MPI_SUM, state_->comm),
          "all-reduce");
    });
  }
  // gathered_: [size, count], rank r's values at r * count; summed in rank order.
  gathered_.resize(static_cast<size_t>(count) * size_);
  VLLM_RETURN_IF_ERROR(
      AllGather(values, count * static_cast<int64_t>(sizeof(float)), gathered_.data()));
  std::copy(gathered_.begin(), gathered_.begin() + count, values);
  for (int r = 1; r < size_; ++r) {
    const float* rank_values = gathered_.data() + r * count;
    for (int64_t i = 0; i < count; ++i) values[i] += rank_values[i];
  }
  return Status::Ok();
}

Status MpiCommunicator::Broadcast(void* bytes, int64_t num_bytes, int root) {
  VLLM_RETURN_IF_ERROR(CheckRank(root, "broadcast"));
  if (num_bytes < 0) return Error{"MPI broadcast: negative size"};
  auto* data = static_cast<char*>(bytes);
  return ForEachPiece(num_bytes, [&](int64_t done, int piece) -> Status {
    MPI_Request request;
    VLLM_RETURN_IF_ERROR(
        Check(MPI_Ibcast(data + done, piece, MPI_BYTE, root, state_->comm, &request), "broadcast"));
    return Wait(&request, "broadcast");
  });
}

Status MpiCommunicator::AllGather(const void* mine, int64_t bytes_per_rank, void* all) {
  if (bytes_per_rank < 0 || bytes_per_rank > INT_MAX) {
    return Error{"MPI all-gather: " + std::to_string(bytes_per_rank) +
                 " bytes per rank is outside 0.." + std::to_string(INT_MAX)};
  }
  if (bytes_per_rank == 0) return Status::Ok();
  const int piece = static_cast<int>(bytes_per_rank);
  return Check(MPI_Allgather(mine, piece, MPI_BYTE, all, piece, MPI_BYTE, state_->comm),
               "all-gather");
}

Status MpiCommunicator::Send(const void* bytes, int64_t num_bytes, int dest_rank) {
  VLLM_RETURN_IF_ERROR(CheckRank(dest_rank, "send"));
  if (num_bytes < 0) return Error{"MPI send: negative size"};
  const auto* data = static_cast<const char*>(bytes);
  return ForEachPiece(num_bytes, [&](int64_t done, int piece) -> Status {
    return Check(MPI_Send(data + done, piece, MPI_BYTE, dest_rank, 0, state_->comm), "send");
  });
}

Status MpiCommunicator::Receive(void* bytes, int64_t num_bytes, int source_rank) {
  VLLM_RETURN_IF_ERROR(CheckRank(source_rank, "receive"));
  if (num_bytes < 0) return Error{"MPI receive: negative size"};
  auto* data = static_cast<char*>(bytes);
  return ForEachPiece(num_bytes, [&](int64_t done, int piece) -> Status {
    return Check(
        MPI_Recv(data + done, piece, MPI_BYTE, source_rank, 0, state_->comm, MPI_STATUS_IGNORE),
        "receive");
  });
}

Status MpiCommunicator::Barrier() { return Check(MPI_Barrier(state_->comm), "barrier"); }

Expected<std::unique_ptr<Communicator>> MpiCommunicator::Split(int color) {
  auto state = std::make_unique<State>();
  VLLM_RETURN_IF_ERROR(Check(MPI_Comm_split(state_->comm, color, rank_, &state->comm), "split"));
  auto adopted = Adopt(std::move(state));
  if (!adopted) return Error{adopted.error()};
  return std::unique_ptr<Communicator>(std::move(*adopted));
}

void MpiCommunicator::FinalizeAtExit() { finalize_at_exit = true; }

void MpiCommunicator::Abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] true if it did
}

}  // namespace vllm::dist
