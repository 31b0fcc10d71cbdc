#include "dist/thread_communicator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace vllm::dist {
namespace {

// Runs fn(communicator) on one thread per rank; returns each rank's status.
std::vector<Status> RunRanks(std::vector<std::unique_ptr<Communicator>>& communicators,
                             const std::function<Status(Communicator&)>& fn) {
  std::vector<Status> statuses(communicators.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < communicators.size(); ++r) {
    threads.emplace_back([&, r] { statuses[r] = fn(*communicators[r]); });
  }
  for (std::thread& thread : threads) thread.join();
  return statuses;
}

void ExpectAllOk(const std::vector<Status>& statuses) {
  for (size_t r = 0; r < statuses.size(); ++r) {
    EXPECT_TRUE(statuses[r].ok()) << "rank " << r << ": " << statuses[r].message();
  }
}

TEST(ThreadCommunicatorTest, RanksAndSizes) {
  auto communicators = CreateThreadCommunicators(3);
  ASSERT_EQ(communicators.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(communicators[r]->rank(), r);
    EXPECT_EQ(communicators[r]->size(), 3);
  }
  EXPECT_TRUE(CreateThreadCommunicators(0).empty());
}

// Values whose float sum depends on the order: every rank must hold the rank-order sum's bits,
// over many calls in a row (the shared result is reused between them).
TEST(ThreadCommunicatorTest, AllReduceSumsInRankOrderWithIdenticalBits) {
  constexpr int kRanks = 4;
  constexpr int64_t kCount = 1001;  // not a multiple of the ranks: uneven shares
  constexpr int kRounds = 50;
  auto value = [](int rank, int round, int64_t i) {
    const float magnitudes[kRanks] = {1e8f, 1.0f, -1e8f, 0.5f};
    return magnitudes[rank] * (1.0f + 0.001f * static_cast<float>((i + round) % 7));
  };
  std::vector<std::vector<float>> results(kRanks);
  auto communicators = CreateThreadCommunicators(kRanks);
  ExpectAllOk(RunRanks(communicators, [&](Communicator& comm) -> Status {
    std::vector<float>& mine = results[comm.rank()];
    for (int round = 0; round < kRounds; ++round) {
      mine.resize(kCount);
      for (int64_t i = 0; i < kCount; ++i) mine[i] = value(comm.rank(), round, i);
      VLLM_RETURN_IF_ERROR(comm.AllReduceSum(mine.data(), kCount));
      for (int64_t i = 0; i < kCount; ++i) {
        float expected = value(0, round, i);
        for (int r = 1; r < kRanks; ++r) expected += value(r, round, i);
        if (std::memcmp(&mine[i], &expected, sizeof(float)) != 0) {
          return Error{"round " + std::to_string(round) + " element " + std::to_string(i) + ": " +
                       std::to_string(mine[i]) + " != " + std::to_string(expected)};
        }
      }
    }
    return Status::Ok();
  }));
}

TEST(ThreadCommunicatorTest, BroadcastCopiesTheRootsBytes) {
  auto communicators = CreateThreadCommunicators(3);
  std::vector<std::string> received(3);
  ExpectAllOk(RunRanks(communicators, [&](Communicator& comm) -> Status {
    std::string bytes = comm.rank() == 1 ? "from rank 1" : "xxxxxxxxxxx";
    VLLM_RETURN_IF_ERROR(comm.Broadcast(bytes.data(), static_cast<int64_t>(bytes.size()), 1));
    received[comm.rank()] = bytes;
    return Status::Ok();
  }));
  for (const std::string& bytes : received) EXPECT_EQ(bytes, "from rank 1");
}

TEST(ThreadCommunicatorTest, AllGatherPlacesRankBytesInRankOrder) {
  auto communicators = CreateThreadCommunicators(3);
  std::vector<std::vector<int32_t>> gathered(3);
  ExpectAllOk(RunRanks(communicators, [&](Communicator& comm) -> Status {
    const int32_t mine[2] = {10 * comm.rank(), 10 * comm.rank() + 1};
    gathered[comm.rank()].resize(6);
    return comm.AllGather(mine, sizeof(mine), gathered[comm.rank()].data());
  }));
  for (const auto& all : gathered) EXPECT_EQ(all, (std::vector<int32_t>{0, 1, 10, 11, 20, 21}));
}

TEST(ThreadCommunicatorTest, SendAndReceiveKeepOrderAndCheckSize) {
  auto communicators = CreateThreadCommunicators(2);
  std::vector<Status> statuses = RunRanks(communicators, [&](Communicator& comm) -> Status {
    if (comm.rank() == 0) {
      for (int32_t message = 1; message <= 3; ++message) {
        VLLM_RETURN_IF_ERROR(comm.Send(&message, sizeof(message), 1));
      }
      const int64_t wide = 7;
      return comm.Send(&wide, sizeof(wide), 1);
    }
    for (int32_t expected = 1; expected <= 3; ++expected) {
      int32_t message = 0;
      VLLM_RETURN_IF_ERROR(comm.Receive(&message, sizeof(message), 0));
      if (message != expected) return Error{"message " + std::to_string(message)};
    }
    int32_t narrow = 0;
    return comm.Receive(&narrow, sizeof(narrow), 0);
  });
  EXPECT_TRUE(statuses[0].ok()) << statuses[0].message();
  ASSERT_FALSE(statuses[1].ok());
  EXPECT_EQ(statuses[1].message(), "rank 1: Receive expected 4 bytes from rank 0, got 8");
  EXPECT_FALSE(communicators[0]->Send("x", 1, 0).ok());  // not to itself
  EXPECT_FALSE(communicators[0]->Send("x", 1, 2).ok());  // no such rank
}

TEST(ThreadCommunicatorTest, MismatchedCountsFailOnEveryRank) {
  auto communicators = CreateThreadCommunicators(2);
  std::vector<Status> statuses = RunRanks(communicators, [&](Communicator& comm) -> Status {
    std::vector<float> values(4, 1.0f);
    return comm.AllReduceSum(values.data(), comm.rank() == 0 ? 4 : 3);
  });
  for (const Status& status : statuses) {
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.message(),
              "AllReduceSum: ranks disagree on the AllReduceSum count: rank 0 has 4, rank 1 has 3");
  }
  // The group stays usable after a refused call.
  ExpectAllOk(RunRanks(communicators, [](Communicator& comm) { return comm.Barrier(); }));
}

// A rank that never arrives: the others fail after the timeout instead of hanging, and the group
// refuses every later call.
TEST(ThreadCommunicatorTest, MissingRankTimesOutInsteadOfHanging) {
  auto communicators = CreateThreadCommunicators(3, {.timeout = std::chrono::milliseconds(100)});
  std::vector<Status> statuses = RunRanks(communicators, [&](Communicator& comm) -> Status {
    if (comm.rank() == 2) return Status::Ok();  // dead rank
    return comm.Barrier();
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(statuses[r].ok());
    EXPECT_NE(statuses[r].message().find("Barrier"), std::string::npos) << statuses[r].message();
  }
  const Status later = communicators[2]->Barrier();
  ASSERT_FALSE(later.ok());
  EXPECT_NE(later.message().find("unusable"), std::string::npos) << later.message();
}

}  // namespace
}  // namespace vllm::dist
