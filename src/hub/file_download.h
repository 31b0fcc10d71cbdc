// One file of a repo into the cache, as huggingface_hub's hf_hub_download puts it there: a HEAD
// of its resolve URL gives the etag (X-Linked-Etag for LFS files, else ETag) and where the bytes
// are; they go to blobs/<etag>.incomplete (an earlier try's bytes kept: the rest asked for with
// Range), which is renamed to blobs/<etag> when whole and linked from snapshots/<commit>/<file>.
// A lock file (.locks/models--org--name/<etag>.lock) keeps two processes off the same blob.
#pragma once

#include <filesystem>
#include <string>

#include "common/expected.h"
#include "hub/http_client.h"

namespace vllm::hub {

struct FileDownloadOptions {
  int max_attempts = 5;              // tries of one file; each after the first resumes
  double retry_delay_seconds = 1.0;  // before the second try, doubling after each
};

Status DownloadRepoFile(const HttpClient& client, const std::string& endpoint,
                        const std::filesystem::path& cache_dir, const std::string& repo,
                        const std::string& commit, const std::string& file,
                        const FileDownloadOptions& options = {});

}  // namespace vllm::hub
