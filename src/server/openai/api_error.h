// vLLM's error responses: {"error": {"message", "type", "param", "code"}} with the HTTP status.
#pragma once

#include <boost/beast/http/status.hpp>
#include <string>

namespace vllm::server {

struct ApiError {
  boost::beast::http::status status = boost::beast::http::status::bad_request;
  std::string message;
  std::string param;  // the request field at fault; empty: null

  static ApiError BadRequest(std::string message, std::string param = "") {
    return {boost::beast::http::status::bad_request, std::move(message), std::move(param)};
  }
  static ApiError NotFound(std::string message) {
    return {boost::beast::http::status::not_found, std::move(message), ""};
  }
  static ApiError Unavailable(std::string message) {
    return {boost::beast::http::status::service_unavailable, std::move(message), ""};
  }
  static ApiError Internal(std::string message) {
    return {boost::beast::http::status::internal_server_error, std::move(message), ""};
  }

  // The error type vLLM names for the status ("BadRequestError", "NotFoundError", ...).
  std::string type() const;
  // The JSON body, as one line.
  std::string ToJson() const;
};

}  // namespace vllm::server
