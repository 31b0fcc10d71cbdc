#include "hub/hub_environment.h"

#include <cctype>
#include <cstdlib>
#include <fstream>

namespace vllm::hub {
namespace {

bool IsTrue(std::string value) {
  for (char& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return value == "1" || value == "ON" || value == "YES" || value == "TRUE";
}

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

std::string TokenFilePath() {
  if (std::string path = EnvironmentValue("HF_TOKEN_PATH"); !path.empty()) return path;
  if (std::string home = EnvironmentValue("HF_HOME"); !home.empty()) return home + "/token";
  if (std::string xdg = EnvironmentValue("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/huggingface/token";
  if (std::string home = EnvironmentValue("HOME"); !home.empty())
    return home + "/.cache/huggingface/token";
  return "";
}

}  // namespace

std::string EnvironmentValue(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string HubEndpoint() {
  std::string endpoint = EnvironmentValue("HF_ENDPOINT");
  if (endpoint.empty()) endpoint = "https://huggingface.co";
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return endpoint;
}

bool HubOffline() {
  return IsTrue(EnvironmentValue("HF_HUB_OFFLINE")) ||
         IsTrue(EnvironmentValue("TRANSFORMERS_OFFLINE"));
}

std::string HubToken(const std::string& flag_token) {
  if (!flag_token.empty()) return flag_token;
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (std::string token = Trim(EnvironmentValue(name)); !token.empty()) return token;
  }
  const std::string path = TokenFilePath();
  if (path.empty()) return "";
  std::ifstream file(path);
  std::string token;
  std::getline(file, token);
  return Trim(token);
}

}  // namespace vllm::hub
