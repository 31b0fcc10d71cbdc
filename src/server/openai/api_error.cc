#include "server/openai/api_error.h"

#include "server/openai/json.h"

namespace vllm::server {

std::string ApiError::type() const {
  namespace http = boost::beast::http;
  switch (status) {
    case http::status::bad_request:
      return "BadRequestError";
    case http::status::unauthorized:
      return "AuthenticationError";
    case http::status::not_found:
      return "NotFoundError";
    case http::status::payload_too_large:
      return "RequestEntityTooLarge";
    case http::status::unsupported_media_type:
      return "UnsupportedMediaType";
    case http::status::method_not_allowed:
      return "MethodNotAllowed";
    case http::status::uri_too_long:
      return "URITooLong";
    case http::status::request_header_fields_too_large:
      return "RequestHeaderFieldsTooLarge";
    case http::status::service_unavailable:
      return "ServiceUnavailableError";
    default:
      return "InternalServerError";
  }
}

std::string ApiError::ToJson() const {
  Json error = {{"message", message},
                {"type", type()},
                {"param", param.empty() ? Json(nullptr) : Json(param)},
                {"code", static_cast<int>(status)}};
  return DumpJson(Json{{"error", std::move(error)}});
}

}  // namespace vllm::server
