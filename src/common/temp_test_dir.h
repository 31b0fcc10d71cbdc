// Tests only: a directory under GoogleTest's temporary directory, named for this process, created
// on construction and removed with everything in it on destruction, so that files written by a
// test (or, for a static one, by a whole test program) do not outlive it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace vllm {

class TempTestDir {
 public:
  explicit TempTestDir(const std::string& name)
      : path_(std::filesystem::path(::testing::TempDir()) /
              (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempTestDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempTestDir(const TempTestDir&) = delete;
  TempTestDir& operator=(const TempTestDir&) = delete;

  // `file_name` inside the directory.
  std::string File(const std::string& file_name) const { return (path_ / file_name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace vllm
