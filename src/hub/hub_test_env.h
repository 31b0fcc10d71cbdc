// Tests only: environment variables set for a test's life and restored after it, starting from
// none of the hub's (so the machine's own HF_HOME or HF_TOKEN never leaks into a test).
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace vllm::hub {

class ScopedHubEnv {
 public:
  ScopedHubEnv() {
    for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME",
                             "HF_ENDPOINT", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN",
                             "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HOME"}) {
      Set(name, std::nullopt);
    }
  }
  ~ScopedHubEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ScopedHubEnv(const ScopedHubEnv&) = delete;
  ScopedHubEnv& operator=(const ScopedHubEnv&) = delete;

  // nullopt: unset.
  void Set(const std::string& name, const std::optional<std::string>& value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old == nullptr ? std::nullopt : std::optional<std::string>(old);
    }
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace vllm::hub
