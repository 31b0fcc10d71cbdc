#include "model/hf_quant/packed_codes.h"

#include <cstring>

#include "model/hf_quant/linear_parts.h"

namespace vllm {

Expected<std::vector<uint32_t>> ReadPackedWords(const SafetensorsTensor& tensor,
                                                const std::vector<int64_t>& shape) {
  if (DtypeName(tensor) != "I32") {
    return Error{"tensor '" + tensor.name + "' has dtype " + DtypeName(tensor) +
                 ", expected I32 (packed codes)"};
  }
  VLLM_RETURN_IF_ERROR(CheckShape(tensor, shape));
  const int64_t count = NumElements(tensor);
  if (count * static_cast<int64_t>(sizeof(uint32_t)) != tensor.num_bytes) {
    return Error{"tensor '" + tensor.name + "' holds " + std::to_string(tensor.num_bytes) +
                 " bytes, not the " + std::to_string(count) + " words of shape " +
                 ShapeText(shape)};
  }
  std::vector<uint32_t> words(count);
  std::memcpy(words.data(), tensor.data, tensor.num_bytes);  // the data may be unaligned
  return words;
}

}  // namespace vllm
