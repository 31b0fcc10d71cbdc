// What huggingface_hub reads from the environment: the hub's address, offline mode and the token.
#pragma once

#include <string>

namespace vllm::hub {

// The environment variable `name`; empty when unset.
std::string EnvironmentValue(const char* name);

// $HF_ENDPOINT without a trailing '/', else https://huggingface.co.
std::string HubEndpoint();

// HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE set to 1, ON, YES or TRUE (any case): never touch the
// network.
bool HubOffline();

// `flag_token` (--hf-token) when given, else $HF_TOKEN, else $HUGGING_FACE_HUB_TOKEN, else the
// file `huggingface-cli login` writes ($HF_TOKEN_PATH, else $HF_HOME/token, else
// ~/.cache/huggingface/token); empty: none.
std::string HubToken(const std::string& flag_token);

}  // namespace vllm::hub
