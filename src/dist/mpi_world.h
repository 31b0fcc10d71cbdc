// Whether this process is one rank of an Open MPI job, read from the environment mpirun gives its
// processes (OMPI_COMM_WORLD_SIZE, _RANK, _LOCAL_SIZE), without starting MPI.
#pragma once

#include <optional>

#include "common/expected.h"

namespace vllm::dist {

struct MpiWorld {
  int size = 1;        // ranks in the job
  int rank = 0;        // this process's rank: 0 … size - 1
  int local_size = 1;  // ranks of the job on this host
};

// The job this process belongs to; nullopt when mpirun did not start it. Errors when the
// variables are set but do not parse or disagree (rank outside the job).
Expected<std::optional<MpiWorld>> MpiWorldFromEnvironment();

}  // namespace vllm::dist
