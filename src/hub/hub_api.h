// The hub's HTTP API as huggingface_hub uses it: a revision's commit and file list, and what an
// error status means for the user.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "hub/http_client.h"

namespace vllm::hub {

struct RepoRevision {
  std::string commit;              // the revision's commit hash
  std::vector<std::string> files;  // every file of the repo at that commit ("siblings")
};

// GET {endpoint}/api/models/{repo}/revision/{revision}.
Expected<RepoRevision> FetchRepoRevision(const HttpClient& client, const std::string& endpoint,
                                         const std::string& repo, const std::string& revision);

// {endpoint}/{repo}/resolve/{revision}/{file}: where a file's bytes are served.
std::string ResolveUrl(const std::string& endpoint, const std::string& repo,
                       const std::string& revision, const std::string& file);

// The message of a hub answer that is neither 2xx nor a redirect: 401 and 403 say the repo is
// gated or private and a token is needed, 404 what was not found (repo, revision or file, from
// the X-Error-Code the hub sends), anything else the status and the hub's own message.
std::string HubErrorMessage(const HttpResponse& response, const std::string& repo,
                            const std::string& revision);

}  // namespace vllm::hub
