// A model argument → a local path. A Hugging Face model id (`org/name`, `org/name:TAG`,
// `org/name/file.gguf`; model_id.h) that is not an existing path is looked up in the hub cache
// (hf_cache.h) at its revision and, when absent and not offline, downloaded from the hub first
// (hub_api.h, file_download.h): what vLLM does with a model id, in the same cache.
#pragma once

#include <string>

#include "common/expected.h"
#include "hub/repo_files.h"

namespace vllm::hub {

struct HubOptions {
  std::string download_dir;  // --download-dir: the cache directory (empty: the environment's)
  std::string revision;      // --revision: branch, tag or commit hash (empty: main)
  std::string token;         // --hf-token (empty: HF_TOKEN, then the login token file)
  RepoPart part = RepoPart::kModel;  // kTokenizer for --tokenizer: no weights fetched
};

// `model` itself when it exists; else, for a model id, a snapshot directory (a safetensors repo)
// or a GGUF file in the cache. Errors: a path that does not exist and is no id, an id absent from
// the cache when HF_HUB_OFFLINE is set, and the hub's (not found, gated, no matching GGUF, ...).
Expected<std::string> ResolveModel(const std::string& model, const HubOptions& options);

}  // namespace vllm::hub
