// The architectures this build supports. Adding one is a file in arch/ that defines its
// Architecture descriptors plus one line in registry.cc's list.
#pragma once

#include "model/architecture.h"

namespace vllm {

// Descriptors defined in arch/.
extern const Architecture kLlamaArchitecture;  // llama (Llama, Mistral, Mixtral)
extern const Architecture kQwen2Architecture;
extern const Architecture kQwen3Architecture;
extern const Architecture kQwen3MoeArchitecture;
extern const Architecture kPhi3Architecture;
extern const Architecture kGemma2Architecture;
extern const Architecture kGemma3Architecture;
extern const Architecture kGemmaEmbeddingArchitecture;
extern const Architecture kGptOssArchitecture;
extern const Architecture kBertArchitecture;        // bert (BERT; XLM-R as llama.cpp writes it)
extern const Architecture kXlmRobertaArchitecture;  // Hugging Face XLM-RoBERTa

}  // namespace vllm
