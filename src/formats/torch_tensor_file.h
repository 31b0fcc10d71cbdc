// Reads one tensor saved with torch.save (the format vLLM's `prompt_embeds` carries, base64
// encoded) without Python: a ZIP archive of STORED entries (formats/zip_archive.h) holding
//
//   <name>/data.pkl      a pickle (protocol 2) that rebuilds the tensor:
//                        torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride,
//                        requires_grad, backward_hooks[, metadata]), the storage given as a
//                        persistent id ('storage', torch.<Type>Storage, key, location, numel)
//   <name>/data/<key>    the storage's raw little-endian elements
//   <name>/byteorder     "little" (absent from old files, which are little-endian)
//   <name>/version       the archive format version
//
// The pickle is interpreted by a restricted machine that knows only the opcodes torch.save
// emits for one tensor and only the globals _rebuild_tensor_v2, collections.OrderedDict and the
// Float/BFloat16/Half storages; it builds values and calls nothing. Tensors must be contiguous.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/expected.h"

namespace vllm {

enum class TorchDtype { kFloat32, kBFloat16, kFloat16 };

struct TorchTensor {
  TorchDtype dtype = TorchDtype::kFloat32;
  std::vector<int64_t> shape;  // as saved, outermost first
  std::vector<float> values;   // [product(shape)], row-major, widened to float32
};

// The tensor in `file` (the bytes torch.save wrote); a clear error on anything else.
Expected<TorchTensor> ReadTorchTensor(std::span<const uint8_t> file);

// The bytes torch.save(tensor, io.BytesIO()) writes for a contiguous tensor of `shape` whose
// row-major elements are `values` stored as `dtype` (entries under "archive/", each's data
// aligned to 64 bytes as torch aligns them). For tests and the tools that make their inputs.
std::vector<uint8_t> WriteTorchTensor(TorchDtype dtype, std::span<const int64_t> shape,
                                      std::span<const float> values);

}  // namespace vllm
