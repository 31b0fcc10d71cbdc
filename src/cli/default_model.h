// The model `vllm-cpp serve` runs when it is given none: a tiny random-weight Llama (the
// llama-tiny shape) with a byte-level vocabulary (256 byte tokens, BOS, EOS: any text tokenizes)
// and a chat template, written on first use into the user's cache directory. Its output is noise;
// it exists so that a clone of the repository alone serves something.
#pragma once

#include <string>

#include "common/expected.h"

namespace vllm {

// $XDG_CACHE_HOME/vllm-cpp (else $HOME/.cache/vllm-cpp) / the model's file name.
Expected<std::string> DefaultModelPath();

// The default model's path, writing the file first when it is absent, or when it does not match
// the checksum written beside it (`<file>.checksum`: a flipped bit, a truncation, or a file from a
// version that wrote no checksum). Each write goes to temporary names, flushed, then renamed, so a
// concurrent or interrupted run never sees half a file. Logs what it serves or rewrites; an error
// from a rewrite names the file to delete.
Expected<std::string> EnsureDefaultModel();

}  // namespace vllm
