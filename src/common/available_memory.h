// How much memory this process can still make resident.
#pragma once

#include <cstdint>
#include <optional>

namespace vllm {

// /proc/meminfo's MemAvailable, capped by the headroom (limit less usage, inactive file pages
// not counted) of the process's memory cgroup and every ancestor: cgroup v2 memory.max /
// memory.current, or v1 memory.limit_in_bytes / memory.usage_in_bytes. nullopt where
// /proc/meminfo is unreadable.
std::optional<int64_t> AvailableMemoryBytes();

}  // namespace vllm
