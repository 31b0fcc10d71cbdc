// Opens a GGUF model file and builds the model on a thread pool: what the CLI commands share.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "formats/gguf_file.h"
#include "model/model.h"

namespace vllm {

struct LoadedModel {
  std::unique_ptr<GgufFile> file;  // mmap'd; weights used in place point into it
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Model> model;
};

// num_threads 0: one per core.
Expected<LoadedModel> LoadModel(const std::string& path, int num_threads);

}  // namespace vllm
