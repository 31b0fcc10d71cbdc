#include "server/openai/embeddings/protocol.h"

#include <bit>
#include <cstring>

namespace vllm::server {

Expected<EmbeddingsRequest> ParseEmbeddingsRequest(const Json& body, ApiError* error) {
  EmbeddingsRequest request;
  auto inputs = ParsePoolingInputs(body, "input", error);
  if (!inputs.ok()) return Error{inputs.error()};
  request.inputs = std::move(*inputs);
  auto params = ParsePoolingParams(body, error);
  if (!params.ok()) return Error{params.error()};
  request.params = *params;
  auto fail = [&](std::string message, std::string param) -> Expected<EmbeddingsRequest> {
    *error = ApiError::BadRequest(std::move(message), std::move(param));
    return Error{error->message};
  };
  auto format = GetString(body, "encoding_format");
  if (!format.ok()) return fail(format.error(), "encoding_format");
  if (*format && **format != "float" && **format != "base64") {
    return fail("encoding_format: Input should be 'float' or 'base64'", "encoding_format");
  }
  request.base64 = *format == "base64";
  auto user = GetString(body, "user");
  if (!user.ok()) return fail(user.error(), "user");
  request.user = *user;
  return request;
}

std::string EncodeFloatsBase64(const std::vector<float>& values) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(values[i]);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = uint32_t{bytes[i]} << 16;
    if (n > 1) group |= uint32_t{bytes[i + 1]} << 8;
    if (n > 2) group |= bytes[i + 2];
    for (size_t c = 0; c < 4; ++c) out += c <= n ? kAlphabet[(group >> (18 - 6 * c)) & 63] : '=';
  }
  return out;
}

Json VectorListResponse(const ResponseStamp& stamp, const std::string& model,
                        const std::vector<PoolingRequestOutput>& outputs, bool base64,
                        const char* object, const char* field) {
  Json data = Json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::vector<float>& values = outputs[i].outputs.data;
    data.push_back({{"index", i},
                    {"object", object},
                    {field, base64 ? Json(EncodeFloatsBase64(values)) : Json(values)}});
  }
  return PoolingListResponse(stamp, model, std::move(data), outputs);
}

}  // namespace vllm::server
