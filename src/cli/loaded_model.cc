#include "cli/loaded_model.h"

#include <chrono>

#include "common/cpu_features.h"
#include "common/logging.h"

namespace vllm {

Expected<PooledModel> LoadPooledModel(const std::string& path, int num_threads) {
  auto start = std::chrono::steady_clock::now();
  PooledModel pooled;
  pooled.pool = std::make_unique<ThreadPool>(ThreadPool::Options{.num_threads = num_threads});
  auto loaded = LoadModelFromPath(path, {.pool = pooled.pool.get()});
  if (!loaded) return Error{loaded.error()};
  pooled.loaded = std::move(*loaded);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ModelConfig& config = pooled.model().config();
  VLLM_LOG(kInfo) << "loaded " << path << " (" << config.architecture << ", " << config.num_layers
                  << " layers, hidden " << config.hidden_size << ", vocab " << config.vocab_size
                  << ") in " << seconds << " s on " << pooled.pool->num_threads() << " threads ["
                  << GetCpuFeatures().ToString() << "]";
  return pooled;
}

}  // namespace vllm
