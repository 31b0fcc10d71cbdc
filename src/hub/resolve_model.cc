#include "hub/resolve_model.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include "common/logging.h"
#include "hub/file_download.h"
#include "hub/hf_cache.h"
#include "hub/hub_api.h"
#include "hub/hub_environment.h"
#include "hub/model_id.h"

namespace vllm::hub {
namespace {

namespace fs = std::filesystem;

// Every file under `dir`, as paths relative to it with '/' separators.
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file(error))
      files.push_back(it->path().lexically_relative(dir).generic_string());
  }
  return files;
}

bool Contains(const std::vector<std::string>& files, const std::string& file) {
  return std::find(files.begin(), files.end(), file) != files.end();
}

// What `id` needs among `files` (a snapshot's or the hub's list): the checkpoint's files, or the
// one GGUF file.
struct RepoChoice {
  std::vector<std::string> files;
  std::string path;  // relative to the snapshot: "" for the snapshot directory, else the file
};

Expected<RepoChoice> Choose(const ModelId& id, const std::vector<std::string>& files,
                            RepoPart part) {
  if (!id.gguf_file.empty()) {
    if (!Contains(files, id.gguf_file)) return Error{id.gguf_file + " is not a file of " + id.repo};
    // A shard, or a file name the tag rules refuse, is caught by the same choice.
    auto file = ChooseGgufFile({id.gguf_file}, "", id.repo);
    if (!file) return Error{file.error()};
    auto set = GgufSetFiles(files, *file, id.repo);
    if (!set) return Error{set.error()};
    return RepoChoice{.files = std::move(*set), .path = *file};
  }
  const bool tokenizer_only =
      part == RepoPart::kTokenizer &&
      (Contains(files, "tokenizer.json") || Contains(files, "tokenizer_config.json") ||
       Contains(files, "tekken.json") || Contains(files, "tokenizer.model"));
  if (id.gguf_tag.empty() && (IsSafetensorsRepo(files) || tokenizer_only)) {
    auto selected = SelectCheckpointFiles(files, part, id.repo);
    if (!selected) return Error{selected.error()};
    return RepoChoice{.files = std::move(*selected), .path = ""};
  }
  auto file = ChooseGgufFile(files, id.gguf_tag, id.repo);
  if (!file) return Error{file.error()};
  auto set = GgufSetFiles(files, *file, id.repo);
  if (!set) return Error{set.error()};
  return RepoChoice{.files = std::move(*set), .path = *file};
}

// The choice when every file it needs is in the snapshot (config.json, fetched last, stands for
// a whole checkpoint); else why not.
Expected<std::string> FromSnapshot(const ModelId& id, const fs::path& snapshot, RepoPart part) {
  std::error_code error;
  if (!fs::is_directory(snapshot, error)) return Error{snapshot.string() + " is absent"};
  auto choice = Choose(id, FilesUnder(snapshot), part);
  if (!choice) return Error{choice.error()};
  const fs::path path = choice->path.empty() ? snapshot : snapshot / choice->path;
  return path.string();
}

Expected<std::string> Download(const ModelId& id, const std::string& revision,
                               const fs::path& cache_dir, const HubOptions& options) {
  const std::string endpoint = HubEndpoint();
  HttpClient client({.bearer_token = HubToken(options.token)});
  auto info = FetchRepoRevision(client, endpoint, id.repo, revision);
  if (!info) return Error{info.error()};
  if (!IsCommitHash(info->commit)) {
    return Error{"the hub named a bad commit '" + info->commit + "' for " + id.repo};
  }
  auto choice = Choose(id, info->files, options.part);
  if (!choice) return Error{choice.error()};
  VLLM_LOG(kInfo) << "fetching " << choice->files.size() << " file(s) of " << id.repo
                  << " at commit " << info->commit << " from " << endpoint << " into "
                  << cache_dir.string();
  for (const std::string& file : choice->files) {
    VLLM_RETURN_IF_ERROR(
        DownloadRepoFile(client, endpoint, cache_dir, id.repo, info->commit, file));
  }
  const fs::path repo_dir = RepoCacheDir(cache_dir, id.repo);
  if (revision != info->commit) VLLM_RETURN_IF_ERROR(WriteRef(repo_dir, revision, info->commit));
  const fs::path snapshot = repo_dir / "snapshots" / info->commit;
  return (choice->path.empty() ? snapshot : snapshot / choice->path).string();
}

}  // namespace

Expected<std::string> ResolveModel(const std::string& model, const HubOptions& options) {
  std::error_code error;
  if (fs::exists(model, error)) return model;
  std::optional<ModelId> id = ParseModelId(model);
  if (!id) {
    return Error{"'" + model +
                 "' is neither a local file or directory nor a Hugging Face model id (org/name)"};
  }
  auto cache_dir = HubCacheDir(options.download_dir);
  if (!cache_dir) return Error{cache_dir.error()};
  const std::string revision = options.revision.empty() ? "main" : options.revision;
  if (!IsCommitHash(revision) && !IsSafeRevisionName(revision)) {
    return Error{"bad revision '" + revision + "'"};
  }
  const fs::path repo_dir = RepoCacheDir(*cache_dir, id->repo);
  auto commit = CachedCommit(repo_dir, revision);
  if (!commit) return Error{commit.error()};
  std::string not_cached =
      "not in the Hugging Face cache: " + (repo_dir / "refs" / revision).string() + " is absent";
  if (!commit->empty()) {
    auto cached = FromSnapshot(*id, repo_dir / "snapshots" / *commit, options.part);
    if (cached) {
      VLLM_LOG(kInfo) << model << " (revision " << revision << ") is " << *cached;
      return cached;
    }
    not_cached = "not whole in the Hugging Face cache: " + cached.error();
  }
  if (HubOffline()) {
    return Error{model + " is " + not_cached +
                 "; HF_HUB_OFFLINE is set, so nothing is downloaded (unset it, or fetch the "
                 "model while online)"};
  }
  auto downloaded = Download(*id, revision, *cache_dir, options);
  if (!downloaded) return Error{model + ": " + downloaded.error()};
  VLLM_LOG(kInfo) << model << " (revision " << revision << ") is " << *downloaded;
  return downloaded;
}

}  // namespace vllm::hub
