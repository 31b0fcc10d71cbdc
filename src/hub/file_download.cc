#include "hub/file_download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "common/logging.h"
#include "hub/ascii_lower.h"
#include "hub/download_progress.h"
#include "hub/hf_cache.h"
#include "hub/hub_api.h"
#include "hub/sha256_digest.h"

namespace vllm::hub {
namespace {

// An etag as a file name: quotes and a weak marker removed; only [A-Za-z0-9_.-] allowed.
Expected<std::string> EtagOf(const HttpResponse& response) {
  std::string etag = response.Header("x-linked-etag");
  if (etag.empty()) etag = response.Header("etag");
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  if (etag.empty()) return Error{"the hub sent no ETag"};
  for (char c : etag) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return Error{"the hub sent a bad ETag '" + etag + "'"};
    }
  }
  return etag;
}

int64_t HeaderNumber(const HttpResponse& response, const std::string& name) {
  const std::string value = response.Header(name);
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
      value.size() > 18) {
    return 0;
  }
  return std::stoll(value);
}

// An exclusive flock held for the object's life.
class FileLock {
 public:
  static Expected<FileLock> Acquire(const std::filesystem::path& path) {
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Error{"cannot open " + path.string() + ": " + std::strerror(errno)};
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd);
        return Error{"cannot lock " + path.string() + ": " + std::strerror(errno)};
      }
    }
    return FileLock(fd);
  }
  FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

// One try: the bytes of `url` from the size of `incomplete` on, appended to it (or written from
// the start when the server ignores the Range). `retryable`: whether another try may succeed (a
// lost connection or a server error, not a 4xx). With `sha256`, the whole file's digest (the
// bytes kept from an earlier try read back, the new ones hashed as they are written).
Status DownloadOnce(const HttpClient& client, const std::string& url,
                    const std::filesystem::path& incomplete, int64_t expected_size,
                    const std::string& name, const std::string& repo, const std::string& commit,
                    bool* retryable, std::string* sha256) {
  *retryable = false;
  std::error_code error;
  int64_t offset = std::filesystem::exists(incomplete, error)
                       ? static_cast<int64_t>(std::filesystem::file_size(incomplete, error))
                       : 0;
  if (error) offset = 0;
  if (expected_size > 0 && offset >= expected_size) offset = 0;  // nothing to ask for: restart
  std::FILE* output = nullptr;
  std::optional<DownloadProgress> progress;
  std::optional<Sha256Digest> digest;
  HttpClient::BodySink sink{
      .on_start = [&](const HttpResponse& response) -> Status {
        const bool resumed = response.status == 206 && offset > 0;
        if (response.status == 206 &&
            response.Header("content-range").rfind("bytes " + std::to_string(offset) + "-", 0) !=
                0) {
          return Error{"the server answered the range request with other bytes"};
        }
        if (!resumed) offset = 0;
        output = std::fopen(incomplete.c_str(), resumed ? "ab" : "wb");
        if (output == nullptr) {
          return Error{"cannot write " + incomplete.string() + ": " + std::strerror(errno)};
        }
        if (sha256 != nullptr) {
          digest.emplace();
          if (resumed) VLLM_RETURN_IF_ERROR(digest->UpdateFromFile(incomplete, offset));
        }
        const int64_t length = HeaderNumber(response, "content-length");
        progress.emplace(name, length > 0 ? offset + length : expected_size, offset);
        return Status::Ok();
      },
      .on_bytes = [&](const char* data, size_t size) -> Status {
        if (std::fwrite(data, 1, size, output) != size) {
          return Error{"cannot write " + incomplete.string() + ": " + std::strerror(errno)};
        }
        if (digest) digest->Update(data, size);
        progress->Advance(static_cast<int64_t>(size));
        return Status::Ok();
      }};
  auto response = client.Download(url, offset, sink);
  const bool closed = output == nullptr || std::fclose(output) == 0;
  if (!response) {
    *retryable = true;
    return Error{response.error()};
  }
  if (response->status / 100 != 2) {
    *retryable = response->status >= 500;
    return Error{HubErrorMessage(*response, repo, commit)};
  }
  if (!closed) return Error{"cannot write " + incomplete.string()};
  if (digest) *sha256 = digest->HexDigest();
  progress->Finish();
  return Status::Ok();
}

}  // namespace

Status DownloadRepoFile(const HttpClient& client, const std::string& endpoint,
                        const std::filesystem::path& cache_dir, const std::string& repo,
                        const std::string& commit, const std::string& file,
                        const FileDownloadOptions& options) {
  const std::string url = ResolveUrl(endpoint, repo, commit, file);
  auto head = client.Head(url);
  if (!head) return Error{head.error()};
  if (head->status / 100 != 2 && head->status / 100 != 3) {
    return Error{HubErrorMessage(*head, repo, commit)};
  }
  auto etag = EtagOf(*head);
  if (!etag) return Error{url + ": " + etag.error()};
  std::string bytes_url = head->url.Origin() + head->url.target;
  if (head->status / 100 == 3 && !head->Header("location").empty()) {
    auto location = ResolveLocation(head->url, head->Header("location"));
    if (!location) return Error{url + ": redirected to " + location.error()};
    bytes_url = location->Origin() + location->target;
  }
  int64_t size = HeaderNumber(*head, "x-linked-size");
  if (size == 0 && head->status == 200) size = HeaderNumber(*head, "content-length");

  const std::filesystem::path repo_dir = RepoCacheDir(cache_dir, repo);
  const std::filesystem::path blob = repo_dir / "blobs" / *etag;
  auto lock = FileLock::Acquire(cache_dir / ".locks" / repo_dir.filename() / (*etag + ".lock"));
  if (!lock) return Error{lock.error()};
  std::error_code error;
  if (!std::filesystem::exists(blob, error)) {
    std::filesystem::create_directories(blob.parent_path(), error);
    if (error)
      return Error{"cannot create " + blob.parent_path().string() + ": " + error.message()};
    const std::filesystem::path incomplete = blob.string() + ".incomplete";
    // An LFS file's etag is its sha256; a small file's is a git blob id, not checked.
    const bool check_sha256 = IsSha256Hex(*etag);
    std::string sha256;
    double delay = options.retry_delay_seconds;
    for (int attempt = 1;; ++attempt) {
      bool retryable = false;
      Status status = DownloadOnce(client, bytes_url, incomplete, size, repo + "/" + file, repo,
                                   commit, &retryable, check_sha256 ? &sha256 : nullptr);
      if (status.ok() && size > 0) {
        const auto got = static_cast<int64_t>(std::filesystem::file_size(incomplete, error));
        if (got != size) {
          status = Error{"got " + std::to_string(got) + " bytes of " + std::to_string(size)};
          retryable = true;
        }
      }
      if (status.ok()) break;
      if (!retryable || attempt >= options.max_attempts) {
        return Error{"downloading " + file + " of " + repo + ": " + status.message()};
      }
      VLLM_LOG(kWarning) << "downloading " << file << " of " << repo << ": " << status.message()
                         << "; trying again in " << delay << " s (try " << attempt + 1 << " of "
                         << options.max_attempts << ", resuming)";
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      delay *= 2;
    }
    if (check_sha256 && sha256 != AsciiLower(*etag)) {
      // Bytes that are wrong cannot be resumed from: none are kept.
      std::filesystem::remove(incomplete, error);
      return Error{"downloading " + file + " of " + repo + ": the file's sha256 is " + sha256 +
                   ", not the hub's " + *etag +
                   " (corrupted in transfer?); the download was removed, run again to retry"};
    }
    std::filesystem::rename(incomplete, blob, error);
    if (error) return Error{"cannot rename " + incomplete.string() + ": " + error.message()};
  }
  return LinkSnapshotFile(repo_dir, commit, file, *etag);
}

}  // namespace vllm::hub
