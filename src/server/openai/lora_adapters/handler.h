// POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vLLM's runtime LoRA updating): only
// with VLLM_ALLOW_RUNTIME_LORA_UPDATING true; otherwise 404, as vLLM registers no such routes.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker. {"lora_name", "lora_path", "load_inplace"}: loads the adapter (read and
// checked against the base at once) and answers 200 with vLLM's plain-text "Success: LoRA adapter
// '<name>' added successfully."; errors as LoraAdapterRegistry::Load.
void HandleLoadLoraAdapter(ServingContext& context, const RequestMeta& meta,
                           const std::shared_ptr<ResponseWriter>& writer, const Json& body);

// Runs on a request worker. {"lora_name"}: "Success: LoRA adapter '<name>' removed
// successfully."; 404 for a name not loaded. Requests already running with it finish with it.
void HandleUnloadLoraAdapter(ServingContext& context, const RequestMeta& meta,
                             const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
