#include "hub/hf_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "hub/hub_environment.h"

namespace vllm::hub {

Expected<std::filesystem::path> HubCacheDir(const std::string& download_dir) {
  if (!download_dir.empty()) return std::filesystem::path(download_dir);
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    if (std::string dir = EnvironmentValue(name); !dir.empty()) return std::filesystem::path(dir);
  }
  if (std::string home = EnvironmentValue("HF_HOME"); !home.empty()) {
    return std::filesystem::path(home) / "hub";
  }
  std::filesystem::path cache;
  if (std::string xdg = EnvironmentValue("XDG_CACHE_HOME"); !xdg.empty()) {
    cache = xdg;
  } else if (std::string home = EnvironmentValue("HOME"); !home.empty()) {
    cache = std::filesystem::path(home) / ".cache";
  } else {
    return Error{"no Hugging Face cache: set HF_HOME, HF_HUB_CACHE or --download-dir"};
  }
  return cache / "huggingface" / "hub";
}

std::filesystem::path RepoCacheDir(const std::filesystem::path& cache_dir,
                                   const std::string& repo) {
  std::string folder = "models--" + repo;
  for (size_t slash = folder.find('/'); slash != std::string::npos; slash = folder.find('/')) {
    folder.replace(slash, 1, "--");
  }
  return cache_dir / folder;
}

bool IsCommitHash(const std::string& revision) {
  if (revision.size() != 40) return false;
  for (char c : revision) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsSafeRevisionName(const std::string& revision) {
  if (revision.empty() || revision.front() == '/') return false;
  for (const auto& segment : std::filesystem::path(revision)) {
    if (segment.empty() || segment == "." || segment == "..") return false;
  }
  return revision.back() != '/';
}

Expected<std::string> CachedCommit(const std::filesystem::path& repo_dir,
                                   const std::string& revision) {
  if (IsCommitHash(revision)) return revision;
  if (!IsSafeRevisionName(revision)) return Error{"bad revision name '" + revision + "'"};
  const std::filesystem::path ref = repo_dir / "refs" / revision;
  std::ifstream file(ref);
  if (!file) return std::string();
  std::string commit;
  std::getline(file, commit);
  if (!IsCommitHash(commit)) return Error{ref.string() + " holds no commit hash"};
  return commit;
}

Status WriteRef(const std::filesystem::path& repo_dir, const std::string& revision,
                const std::string& commit) {
  const std::filesystem::path ref = repo_dir / "refs" / revision;
  std::error_code error;
  std::filesystem::create_directories(ref.parent_path(), error);
  if (error) return Error{"cannot create " + ref.parent_path().string() + ": " + error.message()};
  const std::filesystem::path temporary = ref.string() + "." + std::to_string(::getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << commit;
    if (!file.flush()) return Error{"cannot write " + temporary.string()};
  }
  std::filesystem::rename(temporary, ref, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return Error{"cannot write " + ref.string()};
  }
  return Status::Ok();
}

Status LinkSnapshotFile(const std::filesystem::path& repo_dir, const std::string& commit,
                        const std::string& file, const std::string& etag) {
  const std::filesystem::path link = repo_dir / "snapshots" / commit / file;
  std::filesystem::path target = std::filesystem::path("..") / "..";
  for (auto folder = std::filesystem::path(file).parent_path(); !folder.empty();
       folder = folder.parent_path()) {
    target /= "..";
  }
  target = target / "blobs" / etag;
  std::error_code error;
  std::filesystem::create_directories(link.parent_path(), error);
  if (error) return Error{"cannot create " + link.parent_path().string() + ": " + error.message()};
  std::filesystem::remove(link, error);
  std::filesystem::create_symlink(target, link, error);
  if (error) return Error{"cannot link " + link.string() + ": " + error.message()};
  return Status::Ok();
}

}  // namespace vllm::hub
