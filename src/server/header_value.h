// Reading one header field of an HTTP request.
#pragma once

#include <optional>
#include <string_view>

#include "server/asio.h"

namespace vllm::server {

// The value of `field` in `request`; nullopt when the request does not carry it.
inline std::optional<std::string_view> HeaderValue(
    const boost::beast::http::request_header<>& request, boost::beast::http::field field) {
  const auto it = request.find(field);
  if (it == request.end()) return std::nullopt;
  return std::string_view(it->value().data(), it->value().size());
}

}  // namespace vllm::server
