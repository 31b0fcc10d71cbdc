// Architecture registry: architecture name → factory. Adding an architecture is one file in
// arch/ plus one line in registry.cc.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/tensor_source.h"

namespace vllm {

using ModelFactory = std::function<Expected<std::unique_ptr<Model>>(
    const TensorSource& source, const ModelConfig& config, const ModelLoadOptions& options)>;

// nullptr when the architecture is not supported.
const ModelFactory* FindModelFactory(const std::string& architecture);
std::vector<std::string> SupportedArchitectures();

// Factories defined in arch/.
Expected<std::unique_ptr<Model>> CreateLlamaModel(const TensorSource& source,
                                                  const ModelConfig& config,
                                                  const ModelLoadOptions& options);
Expected<std::unique_ptr<Model>> CreateGemma3Model(const TensorSource& source,
                                                   const ModelConfig& config,
                                                   const ModelLoadOptions& options);
Expected<std::unique_ptr<Model>> CreateQwen3MoeModel(const TensorSource& source,
                                                     const ModelConfig& config,
                                                     const ModelLoadOptions& options);
Expected<std::unique_ptr<Model>> CreatePhi3Model(const TensorSource& source,
                                                 const ModelConfig& config,
                                                 const ModelLoadOptions& options);

}  // namespace vllm
