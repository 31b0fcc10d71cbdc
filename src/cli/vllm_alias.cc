#include "cli/vllm_alias.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

namespace vllm {
namespace {

namespace fs = std::filesystem;

bool SameFile(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

}  // namespace

bool InvokedAsVllm(const std::string& argv0) { return fs::path(argv0).filename() == "vllm"; }

Expected<std::string> InstallVllmAlias(const std::string& dir, const std::string& binary,
                                       const std::string& path) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) return Error{"install-vllm-alias: no directory '" + dir + "'"};
  const fs::path alias = fs::path(dir) / "vllm";
  // Every `vllm` on PATH but this one: a real vLLM stays the one that runs.
  for (size_t start = 0; start <= path.size();) {
    const size_t end = std::min(path.find(':', start), path.size());
    const fs::path candidate = fs::path(path.substr(start, end - start)) / "vllm";
    start = end + 1;
    if (candidate.parent_path().empty() || !fs::exists(candidate, error)) continue;
    if (!SameFile(candidate, binary) && !SameFile(candidate, alias)) {
      return Error{"install-vllm-alias: " + candidate.string() +
                   " is another program (a real vLLM?); refusing to install a `vllm` that would "
                   "shadow it or be shadowed by it"};
    }
  }
  if (fs::symlink_status(alias, error).type() != fs::file_type::not_found) {
    if (fs::is_symlink(alias, error) && SameFile(alias, binary)) {
      return alias.string() + " already runs " + binary;
    }
    return Error{"install-vllm-alias: " + alias.string() +
                 " exists and is not a link to this binary; refusing to replace it"};
  }
  fs::create_symlink(binary, alias, error);
  if (error) {
    return Error{"install-vllm-alias: cannot create " + alias.string() + ": " + error.message()};
  }
  return alias.string() + " -> " + binary + ": `vllm serve ...` now runs vllm-cpp";
}

void RegisterInstallVllmAliasCommand(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "install-vllm-alias",
      "Install a `vllm` command name for this binary in DIR (never over a real vLLM)");
  command->add_option("dir", *dir, "Directory, usually one on PATH")->required();
  command->callback([dir] {
    std::error_code error;
    const fs::path binary = fs::canonical("/proc/self/exe", error);
    const char* path = std::getenv("PATH");
    auto installed = error ? Expected<std::string>(Error{"cannot locate this binary"})
                           : InstallVllmAlias(*dir, binary.string(), path ? path : "");
    if (!installed) {
      std::cerr << "error: " << installed.error() << "\n";
      std::exit(1);
    }
    std::cout << *installed << "\n";
    std::exit(0);
  });
}

}  // namespace vllm
