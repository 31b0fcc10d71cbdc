#include "hub/hub_api.h"

#include <nlohmann/json.hpp>

namespace vllm::hub {

std::string ResolveUrl(const std::string& endpoint, const std::string& repo,
                       const std::string& revision, const std::string& file) {
  return endpoint + "/" + repo + "/resolve/" + PercentEncode(revision, false) + "/" +
         PercentEncode(file, true);
}

std::string HubErrorMessage(const HttpResponse& response, const std::string& repo,
                            const std::string& revision) {
  const std::string code = response.Header("x-error-code");
  if (response.status == 401 || response.status == 403) {
    return repo + " is gated or private (the hub answered " + std::to_string(response.status) +
           (code.empty() ? "" : " " + code) +
           "): set HF_TOKEN (or --hf-token) to a token with access to it, after accepting its "
           "terms on the model's page if it is gated";
  }
  if (response.status == 404) {
    if (code == "RevisionNotFound") return "revision '" + revision + "' of " + repo + " not found";
    if (code == "EntryNotFound") {
      return response.url.target + " not found in " + repo + " at revision " + revision;
    }
    return repo + " not found on " + response.url.Origin() + " (a private repo needs HF_TOKEN)";
  }
  std::string message = response.Header("x-error-message");
  if (message.empty()) {
    const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
    if (body.is_object() && body.contains("error") && body["error"].is_string()) {
      message = body["error"].get<std::string>();
    }
  }
  return response.url.Origin() + response.url.target + " answered " +
         std::to_string(response.status) + (message.empty() ? "" : ": " + message);
}

Expected<RepoRevision> FetchRepoRevision(const HttpClient& client, const std::string& endpoint,
                                         const std::string& repo, const std::string& revision) {
  auto response = client.GetText(endpoint + "/api/models/" + repo + "/revision/" +
                                 PercentEncode(revision, false));
  if (!response) return Error{response.error()};
  if (response->status != 200) return Error{HubErrorMessage(*response, repo, revision)};
  const nlohmann::json info = nlohmann::json::parse(response->body, nullptr, false);
  const std::string where = "the hub's answer for " + repo + " at " + revision;
  if (!info.is_object() || !info.contains("sha") || !info["sha"].is_string()) {
    return Error{where + " has no commit (\"sha\")"};
  }
  RepoRevision result{.commit = info["sha"].get<std::string>()};
  if (auto siblings = info.find("siblings"); siblings != info.end() && siblings->is_array()) {
    for (const auto& sibling : *siblings) {
      if (sibling.is_object() && sibling.contains("rfilename") &&
          sibling["rfilename"].is_string()) {
        result.files.push_back(sibling["rfilename"].get<std::string>());
      }
    }
  }
  return result;
}

}  // namespace vllm::hub
