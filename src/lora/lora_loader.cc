#include "lora/lora_loader.h"

#include <filesystem>

#include "lora/gguf_adapter.h"
#include "lora/lora_file_pairs.h"
#include "lora/peft_adapter.h"

namespace vllm::lora {
namespace {

Expected<LoraFilePairs> ReadAdapterFile(const std::string& path, const LoraBaseShape& base) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) return Error{"No adapter found for " + path};
  if (std::filesystem::is_directory(status)) return ReadPeftDirectory(path, base);
  if (!std::filesystem::is_regular_file(status)) {
    return Error{path + " is neither a PEFT directory nor a GGUF LoRA file"};
  }
  auto file = GgufFile::Open(path);
  if (!file) return Error{"not a GGUF LoRA file: " + file.error()};
  return ReadGgufAdapter(**file, base);
}

}  // namespace

Expected<std::shared_ptr<const LoraWeights>> LoadLoraAdapter(const LoraRequest& request,
                                                             const LoraBaseShape& base,
                                                             const LoraLoadOptions& options) {
  const std::string failed = "Loading lora " + request.lora_name + " failed: ";
  auto file_pairs = ReadAdapterFile(request.lora_path, base);
  if (!file_pairs) return Error{failed + file_pairs.error()};
  auto weights = AssembleLoraWeights(request, base, options.max_lora_rank, std::move(*file_pairs));
  if (!weights) return Error{failed + weights.error()};
  for (LoraLayer& layer : weights->layers) {
    for (std::optional<LoraMatrices>& matrices : layer.targets) {
      if (matrices) StoreLoraMatricesAs(options.dtype, *matrices);
    }
  }
  return std::shared_ptr<const LoraWeights>(std::make_shared<LoraWeights>(std::move(*weights)));
}

}  // namespace vllm::lora
