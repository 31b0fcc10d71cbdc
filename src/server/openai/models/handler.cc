#include "server/openai/models/handler.h"

#include <chrono>

namespace vllm::server {
namespace {

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void HandleModels(ServingContext& context, const RequestMeta& /*meta*/,
                  const std::shared_ptr<ResponseWriter>& writer, const Json& /*body*/) {
  Json data = Json::array();
  for (const std::string& name : context.served_model_names) {
    data.push_back({{"id", name},
                    {"object", "model"},
                    {"created", UnixSeconds()},
                    {"owned_by", "vllm"},
                    {"root", context.model_path},
                    {"parent", nullptr},
                    {"max_model_len", context.engine.max_model_len()}});
  }
  // LoRA adapters after the base, as vLLM's cards: no max_model_len, the base as parent.
  for (const LoraRequest& adapter : context.lora_adapters.List()) {
    data.push_back({{"id", adapter.lora_name},
                    {"object", "model"},
                    {"created", UnixSeconds()},
                    {"owned_by", "vllm"},
                    {"root", adapter.lora_path},
                    {"parent", adapter.base_model_name.empty() ? context.served_model_names.front()
                                                               : adapter.base_model_name},
                    {"max_model_len", nullptr}});
  }
  writer->Send(http::status::ok, "application/json",
               DumpJson({{"object", "list"}, {"data", std::move(data)}}));
}

}  // namespace vllm::server
