// Writes a GGUF Llama model as a Hugging Face model directory (config.json, model.safetensors,
// the tokenizer files of a tokenizer directory): the same weights in the other format, for tests
// and random-weight benchmarks. Q and K rows are put back in Hugging Face's order (llama.cpp
// interleaves each head's rotary pairs at conversion).
#pragma once

#include <string>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "model/hf_quant_writer.h"

namespace vllm {

// F32 / F16 / BF16 tensors only. `tokenizer_dir` holds tokenizer.json and friends (copied).
Status WriteHfCheckpointFromGguf(const GgufFile& gguf, const std::string& output_dir,
                                 const std::string& tokenizer_dir);

// The same directory with every decoder linear weight (IsQuantizedHfLinear) quantized as
// `quantization` says and config.json's quantization_config as its tool writes it; with
// `dequantized_dir` not empty, also that model with those weights replaced by their exact
// dequantized values (F32) and no quantization_config: the reference a loaded quantized
// checkpoint must agree with.
Status WriteQuantizedHfCheckpointFromGguf(const GgufFile& gguf, const std::string& output_dir,
                                          const std::string& tokenizer_dir,
                                          const HfQuantWriterOptions& quantization,
                                          const std::string& dequantized_dir);

}  // namespace vllm
