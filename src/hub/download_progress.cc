#include "hub/download_progress.h"

#include <unistd.h>

#include <cstdio>

#include "common/logging.h"

namespace vllm::hub {
namespace {

// How often the bar is redrawn, and a log line written when stderr is no terminal.
constexpr auto kTerminalInterval = std::chrono::milliseconds(200);
constexpr auto kLogInterval = std::chrono::seconds(10);

std::string Megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

DownloadProgress::DownloadProgress(std::string name, int64_t total_bytes, int64_t done_bytes)
    : name_(std::move(name)),
      total_bytes_(total_bytes),
      done_bytes_(done_bytes),
      resumed_bytes_(done_bytes),
      on_terminal_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_shown_(start_) {
  if (!on_terminal_) {
    VLLM_LOG(kInfo) << "downloading " << name_ << " ("
                    << (total_bytes_ > 0 ? Megabytes(total_bytes_) : std::string("size unknown"))
                    << (done_bytes_ > 0 ? ", resuming at " + Megabytes(done_bytes_) : "") << ")";
  }
}

void DownloadProgress::Advance(int64_t bytes) {
  done_bytes_ += bytes;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_shown_ >= (on_terminal_ ? kTerminalInterval : kLogInterval)) {
    last_shown_ = now;
    Show(false);
  }
}

void DownloadProgress::Finish() { Show(true); }

void DownloadProgress::Show(bool last) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done_bytes_ - resumed_bytes_) / seconds : 0;
  char line[256];
  if (total_bytes_ > 0) {
    const double share = static_cast<double>(done_bytes_) / static_cast<double>(total_bytes_);
    const int filled = static_cast<int>(share * 30);
    std::snprintf(line, sizeof(line), "%s %3d%% [%.*s%*s] %s / %s, %.1f MB/s", name_.c_str(),
                  static_cast<int>(share * 100), filled, "##############################",
                  30 - filled, "", Megabytes(done_bytes_).c_str(), Megabytes(total_bytes_).c_str(),
                  rate / 1e6);
  } else {
    std::snprintf(line, sizeof(line), "%s %s, %.1f MB/s", name_.c_str(),
                  Megabytes(done_bytes_).c_str(), rate / 1e6);
  }
  if (on_terminal_) {
    std::fprintf(stderr, "\r%s\033[K%s", line, last ? "\n" : "");
    std::fflush(stderr);
  } else {
    VLLM_LOG(kInfo) << (last ? "downloaded " : "downloading ") << line;
  }
}

}  // namespace vllm::hub
