// Writes random-weight BERT-style encoder GGUF files (general.architecture "bert", llama.cpp's
// tensor names and keys) of real embedding and reranker shapes, for tests and benchmarks. A
// shape with labels has a classification head (cls, cls.output) and exports to Hugging Face as
// XLMRobertaForSequenceClassification; the others as BertModel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "model/random_model.h"

namespace vllm {

struct EncoderShape {
  std::string name;
  int64_t hidden_size;
  int64_t num_layers;
  int64_t num_heads;
  int64_t intermediate_size;
  int64_t context_length;  // position embedding rows
  int64_t type_vocab_size;
  int64_t num_labels;    // > 0: a sequence-classification head
  int64_t pooling_type;  // llama.cpp's bert.pooling_type (1 mean, 2 cls, 4 rank)
};

// bge-small (33M), bge-m3 (568M, XLM-R-shaped), bge-reranker (bge-m3 with a 1-label head), and
// test shapes of 2 layers, dim 64: bert-tiny, bert-tiny-mean, bert-reranker-tiny.
const std::vector<EncoderShape>& KnownEncoderShapes();
const EncoderShape* FindEncoderShape(const std::string& name);

// Writes options.shape (an encoder shape) with options.vocab_path's tokenizer; linear layers and
// embeddings in options.dtype (a single type), norms and biases in f32. The same seed gives the
// same values whatever the dtype.
Status WriteRandomEncoder(const RandomModelOptions& options, const EncoderShape& shape);

}  // namespace vllm
