// Minimal leveled logging to stderr (stdout is reserved for command output).
#pragma once

#include <sstream>
#include <string_view>

namespace vllm {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Parses "debug" / "info" / "warning" / "error"; returns false on an unknown name.
bool ParseLogLevel(std::string_view name, LogLevel* level);

namespace internal {
class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};
}  // namespace internal

}  // namespace vllm

#define VLLM_LOG(level)                                           \
  if (::vllm::LogLevel::level < ::vllm::GetLogLevel()) {          \
  } else                                                          \
    ::vllm::internal::LogMessage(::vllm::LogLevel::level, __FILE__, __LINE__).stream()
