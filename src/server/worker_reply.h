// Answering from a request worker: responses are written on the connection's strand.
#pragma once

#include <memory>
#include <string>

#include "server/http_session.h"
#include "server/openai/api_error.h"
#include "server/openai/json.h"

namespace vllm::server {

inline void PostResponse(const std::shared_ptr<ResponseWriter>& writer, http::status status,
                         std::string content_type, std::string body) {
  writer->Post(
      [writer, status, content_type = std::move(content_type), body = std::move(body)]() mutable {
        writer->Send(status, content_type, std::move(body));
      });
}

inline void PostJson(const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  PostResponse(writer, http::status::ok, "application/json", DumpJson(body));
}

inline void PostError(const std::shared_ptr<ResponseWriter>& writer, const ApiError& error) {
  PostResponse(writer, error.status, "application/json", error.ToJson());
}

}  // namespace vllm::server
