#include "model/model_loader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>

#include "common/allocator_tuning.h"
#include "common/join.h"
#include "dist/communicator.h"
#include "formats/gguf_split_set.h"
#include "model/gguf_hf_overrides.h"
#include "model/hf_overrides.h"
#include "model/hf_quant/quantization_config.h"

namespace vllm {
namespace {

// classifier_from_token (--hf-overrides, config.json) on an architecture whose factory builds no
// classifier from it would be silently ignored.
Status CheckClassifierBuilt(const Model& model) {
  const ModelConfig& config = model.config();
  if (config.pooler.classifier_token_ids.empty() || config.num_labels > 0) return Status::Ok();
  return Error{"classifier_from_token is not supported for architecture " + config.architecture};
}

// A tensor-parallel rank has packed its slices into memory of its own and reads only its
// vocabulary rows of the embedding in place, but copying column slices read every page of those
// tensors: the file's pages leave the rank's resident set. On a read-only private file mapping
// MADV_DONTNEED keeps the page cache (shared with the other ranks) and refaults a later read.
void DropFilePages(const GgufFile& file) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (const GgufTensor& tensor : file.tensors()) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(tensor.data) / page * page;
    const uintptr_t end = reinterpret_cast<uintptr_t>(tensor.data) + tensor.num_bytes;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
}

}  // namespace

Expected<LoadedModel> LoadModelFromPath(const std::string& path, const ModelLoadOptions& options,
                                        const nlohmann::json& hf_overrides,
                                        const std::string& quantization) {
  // A GGUF type name converts the linear weights (options.linear_type); only methods go further.
  const std::string method = ParseQuantMethod(quantization) ? quantization : "";
  KeepFreedBuffersForReuse();
  LoadedModel loaded;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    auto checkpoint =
        OpenHfCheckpoint(path, hf_overrides, quantization, options.pool, options.hf_config_dir);
    if (!checkpoint) return Error{path + ": " + checkpoint.error()};
    loaded.checkpoint = std::move(*checkpoint);
    auto model = LoadModel(*loaded.checkpoint->source, loaded.checkpoint->config, options);
    if (!model) return Error{path + ": " + model.error()};
    loaded.model = std::move(*model);
    loaded.checkpoint->source->ReleaseQuantizedLinears();
    ReturnFreeHeapPages();
    VLLM_RETURN_IF_ERROR(CheckClassifierBuilt(*loaded.model));
    return loaded;
  }
  if (!options.hf_config_dir.empty()) {
    // vLLM would map the Hugging Face config onto the GGUF weights; here a GGUF model is built
    // from its own metadata only.
    return Error{path + ": --hf-config-path " + options.hf_config_dir +
                 " is for a Hugging Face model directory; a GGUF model takes its config from its "
                 "own metadata (use --hf-overrides to change its keys)"};
  }
  auto file = OpenGgufSplitSet(path);  // a split model's other shards too
  if (!file) return Error{file.error()};
  if (!method.empty()) {
    return Error{path + ": --quantization " + method +
                 " names a Hugging Face checkpoint's quantization method; a GGUF file's tensors "
                 "keep their own types (q8_0, q6_k or q4_k convert its linear weights at load)"};
  }
  loaded.gguf = std::move(*file);
  Status overridden = ApplyHfOverridesToGgufMetadata(hf_overrides, loaded.gguf.get());
  if (!overridden.ok()) return Error{path + ": " + overridden.message()};
  auto config = ModelConfigFromGguf(*loaded.gguf);
  if (!config) return Error{path + ": " + config.error()};
  VLLM_RETURN_IF_ERROR(ApplyHfOverridesToGguf(hf_overrides, *loaded.gguf, &*config));
  auto model = LoadModel(GgufTensorSource(*loaded.gguf), *config, options);
  if (!model) return Error{path + ": " + model.error()};
  loaded.model = std::move(*model);
  if ((options.tensor_parallel != nullptr && options.tensor_parallel->size() > 1) ||
      (options.pipeline_parallel != nullptr && options.pipeline_parallel->size() > 1)) {
    DropFilePages(*loaded.gguf);
  }
  VLLM_RETURN_IF_ERROR(CheckClassifierBuilt(*loaded.model));
  return loaded;
}

Expected<std::optional<GgmlType>> LinearTypeFor(const std::string& dtype,
                                                const std::string& quantization) {
  if (!quantization.empty() && !ParseQuantMethod(quantization)) {
    for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ6_K, GgmlType::kQ4_K}) {
      if (ParseGgmlType(quantization) == type) return std::optional<GgmlType>(type);
    }
    return Error{"unsupported --quantization '" + quantization +
                 "' (supported: q8_0, q6_k, q4_k to quantize at load, or a checkpoint's method: " +
                 Join(QuantMethodNames(), ", ") + ")"};
  }
  if (dtype == "auto") return std::optional<GgmlType>();
  if (dtype == "float32" || dtype == "float") return std::optional<GgmlType>(GgmlType::kF32);
  if (dtype == "bfloat16") return std::optional<GgmlType>(GgmlType::kBF16);
  if (dtype == "float16" || dtype == "half") return std::optional<GgmlType>(GgmlType::kF16);
  return Error{"unsupported --dtype '" + dtype + "' (supported: auto, float32, bfloat16, float16)"};
}

}  // namespace vllm
