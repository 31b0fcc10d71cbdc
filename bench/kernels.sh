#!/usr/bin/env bash
# pp512 / tg128 at batch 1 on random-weight TinyLlama-1.1B-shaped models (BENCHMARKS.md workload 1),
# each type right beside llama.cpp's llama-bench on the same file when LLAMA_BENCH names one.
# Usage: [LLAMA_BENCH=/path/to/llama-bench] bench/kernels.sh [model dir] [types]
#   model dir: default /tmp/vllm-cpp-models (models are written there when missing)
#   types: default "q4_k_m q5_k_m q6_k iq4_xs q4_0 q8_0 bf16" (any make-random-model --dtype)
set -euo pipefail
cd "$(dirname "$0")/.."
models="${1:-/tmp/vllm-cpp-models}"
types="${2:-q4_k_m q5_k_m q6_k iq4_xs q4_0 q8_0 bf16}"
cmake --build build -j2 --target vllm-cpp >/dev/null
mkdir -p "$models"
for t in $types; do
  model="$models/tinyllama-$t.gguf"
  [ -f "$model" ] || build/vllm-cpp make-random-model --shape tinyllama-1.1b --dtype "$t" \
    --vocab ../shared/vocab/ggml-vocab-llama-spm.gguf --out "$model"
  echo "== $t: vllm-cpp"
  build/vllm-cpp bench model -m "$model" -p 512 -n 128 -r 3 -t 2 2>/dev/null
  if [ -n "${LLAMA_BENCH:-}" ]; then
    echo "== $t: llama.cpp"
    "$LLAMA_BENCH" -m "$model" -p 512 -n 128 -r 3 -t 2 2>/dev/null
  fi
done
