// Communicators whose ranks are threads of one process (tests of tensor- and pipeline-parallel
// models without MPI): CreateThreadCommunicators(N) returns N communicators over shared state,
// rank r's to be used by one thread only. Collectives meet at a barrier; a rank that does not
// arrive within the timeout makes every waiting call fail (and every later one), never hang.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "dist/communicator.h"

namespace vllm::dist {

struct ThreadCommunicatorOptions {
  // How long a collective or a Receive waits for the other ranks before failing.
  std::chrono::milliseconds timeout = std::chrono::minutes(2);
};

// `size` communicators of one group, element r with rank r (none when size < 1).
std::vector<std::unique_ptr<Communicator>> CreateThreadCommunicators(
    int size, ThreadCommunicatorOptions options = {});

}  // namespace vllm::dist
