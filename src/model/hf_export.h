// Writes a GGUF Llama model as a Hugging Face model directory (config.json, model.safetensors,
// the tokenizer files of a tokenizer directory): the same weights in the other format, for tests
// and random-weight benchmarks. Q and K rows are put back in Hugging Face's order (llama.cpp
// interleaves each head's rotary pairs at conversion).
#pragma once

#include <string>

#include "common/expected.h"
#include "formats/gguf_file.h"

namespace vllm {

// F32 / F16 / BF16 tensors only. `tokenizer_dir` holds tokenizer.json and friends (copied).
Status WriteHfCheckpointFromGguf(const GgufFile& gguf, const std::string& output_dir,
                                 const std::string& tokenizer_dir);

}  // namespace vllm
