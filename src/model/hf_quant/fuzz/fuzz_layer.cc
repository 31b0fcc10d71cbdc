#include "model/hf_quant/fuzz/fuzz_layer.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>
#include <string_view>

#include "formats/safetensors_writer.h"

namespace vllm {
namespace {

// Reads the fuzz input front to back.
class InputReader {
 public:
  InputReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool AtEnd() const { return position_ == size_; }
  // The bytes up to the next NUL (consumed with it); nullopt when there is none.
  std::optional<std::string_view> Terminated() {
    const void* nul = std::memchr(data_ + position_, 0, size_ - position_);
    if (nul == nullptr) return std::nullopt;
    const size_t length = static_cast<const uint8_t*>(nul) - (data_ + position_);
    std::string_view text(reinterpret_cast<const char*>(data_ + position_), length);
    position_ += length + 1;
    return text;
  }
  std::optional<uint8_t> Byte() {
    if (AtEnd()) return std::nullopt;
    return data_[position_++];
  }
  // `count` bytes, zeros past the end.
  void Fill(uint8_t* out, size_t count) {
    if (count == 0) return;  // `out` may be null then
    const size_t available = std::min(count, size_ - position_);
    std::memcpy(out, data_ + position_, available);
    std::memset(out + available, 0, count - available);
    position_ += available;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
};

}  // namespace

std::optional<FuzzedLayer> DecodeFuzzedLayer(const uint8_t* data, size_t size) {
  InputReader input(data, size);
  FuzzedLayer layer;
  const std::optional<uint8_t> request = input.Byte();
  if (!request) return std::nullopt;
  layer.requested = kFuzzedRequests[*request % std::size(kFuzzedRequests)];
  const std::optional<std::string_view> config = input.Terminated();
  if (!config) return std::nullopt;
  layer.config_json = std::string(*config);

  std::vector<SafetensorsTensor> tensors;
  std::vector<std::vector<uint8_t>> buffers;  // each tensor's data
  std::set<std::string> names;
  int64_t total_bytes = 0;
  while (!input.AtEnd()) {
    const std::optional<std::string_view> suffix = input.Terminated();
    const std::optional<uint8_t> dtype_index = input.Byte();
    const std::optional<uint8_t> rank = input.Byte();
    if (!suffix || !dtype_index || !rank) break;
    SafetensorsTensor tensor;
    tensor.name = std::string(kFuzzedModule) + ".";
    for (char c : *suffix) tensor.name += c >= 0x20 && c < 0x7f ? c : '_';
    tensor.dtype = kFuzzedDtypes[*dtype_index % std::size(kFuzzedDtypes)];
    tensor.type = *SafetensorsDtypeType(tensor.dtype);
    tensor.num_bytes = SafetensorsElementBytes(tensor.type);
    bool complete = true;
    for (int d = 0; d < *rank % 4; ++d) {
      const std::optional<uint8_t> low = input.Byte(), high = input.Byte();
      if (!low || !high) complete = false;
      if (!complete) break;
      tensor.shape.push_back(*low | (*high << 8));
      tensor.num_bytes *= tensor.shape.back();
      if (tensor.num_bytes > kMaxFuzzedLayerBytes) return std::nullopt;
    }
    if (!complete) break;
    total_bytes += tensor.num_bytes;
    if (total_bytes > kMaxFuzzedLayerBytes) return std::nullopt;
    std::vector<uint8_t> bytes(tensor.num_bytes);
    input.Fill(bytes.data(), bytes.size());
    if (!names.insert(tensor.name).second) continue;
    buffers.push_back(std::move(bytes));
    tensors.push_back(std::move(tensor));
  }
  static constexpr uint8_t kNoBytes = 0;  // the data of empty tensors: never null
  for (size_t i = 0; i < tensors.size(); ++i) {
    tensors[i].data = buffers[i].empty() ? &kNoBytes : buffers[i].data();
  }
  auto file = SerializeSafetensors(tensors);
  if (!file) return std::nullopt;
  layer.safetensors = std::move(*file);
  return layer;
}

Expected<std::vector<uint8_t>> EncodeFuzzedLayer(size_t request, const std::string& config_json,
                                                 const std::vector<WrittenTensor>& tensors) {
  if (request >= std::size(kFuzzedRequests)) return Error{"no such request"};
  std::vector<uint8_t> out = {static_cast<uint8_t>(request)};
  out.insert(out.end(), config_json.begin(), config_json.end());
  out.push_back(0);
  const std::string prefix = std::string(kFuzzedModule) + ".";
  for (const WrittenTensor& tensor : tensors) {
    if (tensor.name.rfind(prefix, 0) != 0) {
      return Error{"tensor '" + tensor.name + "' is not one of " + kFuzzedModule};
    }
    const std::string suffix = tensor.name.substr(prefix.size());
    out.insert(out.end(), suffix.begin(), suffix.end());
    out.push_back(0);
    const auto dtype = std::find(std::begin(kFuzzedDtypes), std::end(kFuzzedDtypes), tensor.dtype);
    if (dtype == std::end(kFuzzedDtypes) || tensor.shape.size() > 3) {
      return Error{"tensor '" + tensor.name + "': dtype or rank outside the fuzz input's"};
    }
    out.push_back(static_cast<uint8_t>(dtype - std::begin(kFuzzedDtypes)));
    out.push_back(static_cast<uint8_t>(tensor.shape.size()));
    for (int64_t size : tensor.shape) {
      if (size < 0 || size >= (1 << 16)) {
        return Error{"tensor '" + tensor.name + "': a dimension beyond 2 bytes"};
      }
      out.push_back(static_cast<uint8_t>(size & 0xff));
      out.push_back(static_cast<uint8_t>(size >> 8));
    }
    out.insert(out.end(), tensor.bytes.begin(), tensor.bytes.end());
  }
  return out;
}

}  // namespace vllm
