#!/usr/bin/env bash
# Issue 12's figures for one random-weight model file (a mixture of experts or a Gemma / Phi
# shape): batch 1 (pp128, tg32) and 16 sequences of 128 prompt + 32 generated tokens (prefill =
# the run with one output token; decode = the difference, 16 x 31 tokens), each right beside
# llama.cpp on the same file when LLAMA_BIN names its bin directory (llama-bench,
# llama-batched-bench).
# Usage: [LLAMA_BIN=/path/to/llama.cpp/build/bin] bench/model_families.sh MODEL.gguf
#   Write the model first, e.g.: build/vllm-cpp make-random-model --shape qwen3-30b-a3b
#   --num-layers 4 --dtype q4_k_m --vocab ../shared/vocab/ggml-vocab-llama-spm.gguf --out M.gguf
set -euo pipefail
cd "$(dirname "$0")/.."
model="$1"
cmake --build build -j2 --target vllm-cpp >/dev/null
latency() {  # $1: output tokens; prints the mean seconds of one batch
  build/vllm-cpp bench latency -m "$model" --no-enable-prefix-caching --max-model-len 4096 \
    --input-len 128 --output-len "$1" --batch-size 16 --num-iters 2 -t 2 2>/dev/null |
    awk '/Avg latency/ { print $3 }'
}
echo "== batch 1: vllm-cpp"
build/vllm-cpp bench model -m "$model" -p 128 -n 32 -r 3 -t 2 2>/dev/null
prefill=$(latency 1)
full=$(latency 32)
echo "== 16 sequences: vllm-cpp"
awk -v p="$prefill" -v f="$full" 'BEGIN {
  printf "prefill %.1f tok/s (%.3f s), decode %.1f tok/s (%.3f s for 16 x 31 tokens)\n",
    16 * 128 / p, p, 16 * 31 / (f - p), f - p }'
if [ -n "${LLAMA_BIN:-}" ]; then
  echo "== batch 1: llama.cpp"
  LD_LIBRARY_PATH="$LLAMA_BIN" "$LLAMA_BIN/llama-bench" -m "$model" -p 128 -n 32 -r 3 -t 2 \
    2>/dev/null
  echo "== 16 sequences: llama.cpp (S_PP, S_TG)"
  LD_LIBRARY_PATH="$LLAMA_BIN" "$LLAMA_BIN/llama-batched-bench" -m "$model" -c 4096 -b 2048 \
    -ub 512 -npp 128 -ntg 32 -npl 16 -t 2 2>/dev/null | grep -E "^\|"
fi
