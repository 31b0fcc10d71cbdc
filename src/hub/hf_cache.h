// The Hugging Face hub cache as huggingface_hub lays it out, so that vllm-cpp, transformers and
// vLLM share one copy of each model:
//
//   <cache>/models--org--name/
//     refs/<revision>            the commit hash a branch or tag name stood for when fetched
//     blobs/<etag>               each file's bytes, named by its etag (sha256 for LFS files)
//     blobs/<etag>.incomplete    a download under way, resumed from its size
//     snapshots/<commit>/<path>  relative symbolic links to ../../blobs/<etag>
#pragma once

#include <filesystem>
#include <string>

#include "common/expected.h"

namespace vllm::hub {

// Where the cache lives: `download_dir` (--download-dir) when given, else $HF_HUB_CACHE, else
// $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub (huggingface_hub's order).
Expected<std::filesystem::path> HubCacheDir(const std::string& download_dir);

// <cache>/models--org--name.
std::filesystem::path RepoCacheDir(const std::filesystem::path& cache_dir, const std::string& repo);

// 40 lowercase hex digits: a git commit hash, used as a revision as it is.
bool IsCommitHash(const std::string& revision);

// A branch or tag name usable as a path under refs/: no empty, "." or ".." segment, not absolute.
bool IsSafeRevisionName(const std::string& revision);

// The commit `revision` names in the cache: itself when it is a commit hash, else what
// refs/<revision> holds. Empty when refs/<revision> is absent; an error when it holds no hash.
Expected<std::string> CachedCommit(const std::filesystem::path& repo_dir,
                                   const std::string& revision);

// Writes refs/<revision> = commit (through a temporary file and a rename).
Status WriteRef(const std::filesystem::path& repo_dir, const std::string& revision,
                const std::string& commit);

// snapshots/<commit>/<file> → ../../blobs/<etag> (with one more ../ per folder of `file`),
// replacing an older link.
Status LinkSnapshotFile(const std::filesystem::path& repo_dir, const std::string& commit,
                        const std::string& file, const std::string& etag);

}  // namespace vllm::hub
