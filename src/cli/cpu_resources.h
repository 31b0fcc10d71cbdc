// vLLM's CPU backend thread setting as this build's CLI takes it: VLLM_CPU_OMP_THREADS_BIND. (The
// KV cache's memory, VLLM_CPU_KVCACHE_SPACE and --gpu-memory-utilization, is the engine's:
// src/engine/kv_cache_memory.h.)
#pragma once

#include <string>

#include "common/expected.h"
#include "vllm/engine_args.h"

namespace vllm {

// The threads, unless -t is given (`threads_given`), from VLLM_CPU_OMP_THREADS_BIND: `auto`,
// `all` and `nobind` keep one per core; a CPU list such as 0-3,8 gives one thread per CPU of it
// (they are not pinned: a warning says so). With tensor or pipeline parallelism, one list per rank
// ("0-3|4-7", as many lists as the job's ranks): each rank started by mpirun is
// pinned to its list's CPUs (vLLM's binding per rank) and takes one thread per CPU of it; before
// the ranks are started the lists are only checked.
Status ApplyThreadsBind(bool threads_given, EngineArgs* args);

// The CPUs a list such as "0-3,8" names; refused when it does not parse or has '|' (one list
// per rank, which needs tensor or pipeline parallelism).
Expected<int> CountCpusInList(const std::string& list);

}  // namespace vllm
