#include "dist/mpi_world.h"

#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

namespace vllm::dist {
namespace {

// The variable's value as an int >= minimum; nullopt when unset.
Expected<std::optional<int>> ReadInt(const char* name, int minimum) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::optional<int>();
  const std::string_view value = text;
  int parsed = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || parsed < minimum) {
    return Error{std::string(name) + "='" + std::string(value) +
                 "' is not an integer >= " + std::to_string(minimum)};
  }
  return std::optional<int>(parsed);
}

}  // namespace

Expected<std::optional<MpiWorld>> MpiWorldFromEnvironment() {
  auto size = ReadInt("OMPI_COMM_WORLD_SIZE", 1);
  if (!size) return Error{size.error()};
  if (!*size) return std::optional<MpiWorld>();
  auto rank = ReadInt("OMPI_COMM_WORLD_RANK", 0);
  if (!rank) return Error{rank.error()};
  auto local_size = ReadInt("OMPI_COMM_WORLD_LOCAL_SIZE", 1);
  if (!local_size) return Error{local_size.error()};
  MpiWorld world{.size = **size, .rank = rank->value_or(0), .local_size = local_size->value_or(1)};
  if (world.rank >= world.size || world.local_size > world.size) {
    return Error{"OMPI_COMM_WORLD_RANK=" + std::to_string(world.rank) +
                 " / OMPI_COMM_WORLD_LOCAL_SIZE=" + std::to_string(world.local_size) +
                 " do not fit OMPI_COMM_WORLD_SIZE=" + std::to_string(world.size)};
  }
  return std::optional<MpiWorld>(world);
}

}  // namespace vllm::dist
