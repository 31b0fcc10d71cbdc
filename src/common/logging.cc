#include "common/logging.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace vllm {
namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARNING";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}
}  // namespace

void SetLogLevel(LogLevel level) { g_level = level; }
LogLevel GetLogLevel() { return g_level; }

bool ParseLogLevel(std::string_view name, LogLevel* level) {
  if (name == "debug") *level = LogLevel::kDebug;
  else if (name == "info") *level = LogLevel::kInfo;
  else if (name == "warning") *level = LogLevel::kWarning;
  else if (name == "error") *level = LogLevel::kError;
  else return false;
  return true;
}

namespace internal {
LogMessage::LogMessage(LogLevel level, const char* file, int line) : level_(level) {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%m-%d %H:%M:%S", std::localtime(&now));
  std::string_view path(file);
  size_t slash = path.rfind('/');
  stream_ << LevelName(level_) << " " << stamp << " ["
          << (slash == std::string_view::npos ? path : path.substr(slash + 1)) << ":" << line
          << "] ";
}

LogMessage::~LogMessage() {
  stream_ << '\n';
  std::cerr << stream_.str() << std::flush;
}
}  // namespace internal

}  // namespace vllm
