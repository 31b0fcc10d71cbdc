// libFuzzer target for the path from HTTP bytes to a parsed request: the request parser with the
// server's header and body limits, the JSON body read at the edge (nesting limit), the sampling
// fields of /v1/completions and /v1/chat/completions, the completion prompt shapes, the chat
// messages, and the chat template rendered with them under the server's per-request limits.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>

#include "chat_template/chat_template.h"
#include "server/http_limits.h"
#include "server/openai/chat/messages.h"
#include "server/openai/completions/protocol.h"
#include "server/openai/generation_request.h"
#include "server/openai/json.h"
#include "server/request_limits.h"

namespace {

namespace http = boost::beast::http;
using namespace vllm::server;

// A template of the usual shape that reads every variable a request can set.
constexpr char kTemplate[] = R"({%- if tools %}{{ tools | tojson }}{% endif -%}
{%- for message in messages -%}
{{ '<|' + message['role'] + '|>\n' + message['content'] | trim + '\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<|assistant|>\n' }}{%- endif -%})";

// The parsed request, or nullopt when the bytes are not one complete request within the limits.
std::optional<http::request<http::string_body>> ParseHttp(const uint8_t* data, size_t size) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(kMaxHeaderBytes);
  parser.body_limit(1 << 20);
  parser.eager(true);
  boost::beast::error_code error;
  size_t offset = 0;
  while (offset < size && !parser.is_done()) {
    const size_t used = parser.put(boost::asio::buffer(data + offset, size - offset), error);
    if (error == http::error::need_more) break;
    if (error || used == 0) return std::nullopt;
    offset += used;
  }
  if (!parser.is_done()) {
    if (!parser.is_header_done()) return std::nullopt;  // as a read that meets the end
    parser.put_eof(error);
    if (error || !parser.is_done()) return std::nullopt;
  }
  if (parser.get().target().size() > kMaxTargetBytes) return std::nullopt;
  return parser.release();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const vllm::ChatTemplate chat_template = *vllm::ChatTemplate::Parse(kTemplate);
  auto request = ParseHttp(data, size);
  if (!request) return 0;
  vllm::Expected<Json> body = ParseJsonObject(request->body());
  if (!body.ok()) return 0;
  for (Endpoint endpoint : {Endpoint::kCompletions, Endpoint::kChat}) {
    GenerationRequest parsed;
    ParseGenerationRequest(*body, endpoint, &parsed);
  }
  std::vector<CompletionPrompt> prompts;
  ParseCompletionPrompts(*body, &prompts);
  const RequestLimits limits;
  ChatMessages chat;
  if (ParseChatMessages(*body, limits.max_prompt_bytes, &chat)) return 0;
  Json variables = {{"messages", std::move(chat.messages)},
                    {"add_generation_prompt", chat.add_generation_prompt}};
  if (auto tools = body->find("tools"); tools != body->end()) variables["tools"] = *tools;
  (void)chat_template.Render(variables, limits.TemplateLimits());
  (void)DumpJson(*body);
  return 0;
}
