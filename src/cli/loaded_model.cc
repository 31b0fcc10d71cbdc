#include "cli/loaded_model.h"

#include <chrono>

#include "common/cpu_features.h"
#include "common/logging.h"

namespace vllm {

Expected<LoadedModel> LoadModel(const std::string& path, int num_threads) {
  auto start = std::chrono::steady_clock::now();
  LoadedModel loaded;
  auto file = GgufFile::Open(path);
  if (!file) return Error{file.error()};
  loaded.file = std::move(*file);
  loaded.pool = std::make_unique<ThreadPool>(ThreadPool::Options{.num_threads = num_threads});
  auto model = LoadModelFromGguf(*loaded.file, {.pool = loaded.pool.get()});
  if (!model) return Error{path + ": " + model.error()};
  loaded.model = std::move(*model);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ModelConfig& config = loaded.model->config();
  VLLM_LOG(kInfo) << "loaded " << path << " (" << config.architecture << ", " << config.num_layers
                  << " layers, hidden " << config.hidden_size << ", vocab " << config.vocab_size
                  << ") in " << seconds << " s on " << loaded.pool->num_threads() << " threads ["
                  << GetCpuFeatures().ToString() << "]";
  return loaded;
}

}  // namespace vllm
