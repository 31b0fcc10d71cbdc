#include "server/openai/lora_adapters/handler.h"

#include "server/worker_reply.h"

namespace vllm::server {
namespace {

// vLLM's answer to a runtime update that succeeded: plain text.
void PostSuccess(const std::shared_ptr<ResponseWriter>& writer, const std::string& text) {
  PostResponse(writer, http::status::ok, "text/plain; charset=utf-8", text);
}

}  // namespace

void HandleLoadLoraAdapter(ServingContext& context, const RequestMeta&,
                           const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  if (!context.runtime_lora_updating) return PostError(writer, ApiError::NotFound("Not Found"));
  LoraModulePath module;
  for (const auto& [field, value] :
       {std::pair{"lora_name", &module.name}, std::pair{"lora_path", &module.path}}) {
    auto given = GetString(body, field);
    if (!given.ok()) return PostError(writer, ApiError::BadRequest(given.error(), field));
    *value = given->value_or("");
  }
  auto load_inplace = GetBool(body, "load_inplace");
  if (!load_inplace.ok()) {
    return PostError(writer, ApiError::BadRequest(load_inplace.error(), "load_inplace"));
  }
  if (auto error = context.lora_adapters.Load(context.engine, module, context.served_model_names,
                                              load_inplace->value_or(false))) {
    return PostError(writer, *error);
  }
  PostSuccess(writer, "Success: LoRA adapter '" + module.name + "' added successfully.");
}

void HandleUnloadLoraAdapter(ServingContext& context, const RequestMeta&,
                             const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  if (!context.runtime_lora_updating) return PostError(writer, ApiError::NotFound("Not Found"));
  auto name = GetString(body, "lora_name");
  if (!name.ok()) return PostError(writer, ApiError::BadRequest(name.error(), "lora_name"));
  if (auto error = context.lora_adapters.Unload(context.engine, name->value_or(""))) {
    return PostError(writer, *error);
  }
  PostSuccess(writer, "Success: LoRA adapter '" + name->value_or("") + "' removed successfully.");
}

}  // namespace vllm::server
