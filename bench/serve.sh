#!/usr/bin/env bash
# The serving sweep (BENCHMARKS.md workload 4, with llama.cpp's server workload: 130-token random
# prompts, 64 output tokens, ignore_eos, streaming) at concurrency 1, 4, 16 and 32 against
# `vllm-cpp serve` on the TinyLlama-1.1B shape.
# Usage: bench/serve.sh [model, default /tmp/vllm-cpp-models/tinyllama-q8_0.gguf] [port 8123]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-/tmp/vllm-cpp-models/tinyllama-q8_0.gguf}"
port="${2:-8123}"
cmake --build build -j2 --target vllm-cpp >/dev/null
source bench/serving_common.sh
ensure_model "$model"
start_server "$model" "$port"
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for concurrency in 1 4 16 32; do
  prompts=$((concurrency * 4))
  [ $prompts -lt 8 ] && prompts=8
  echo "== concurrency $concurrency, $prompts prompts"
  build/vllm-cpp bench serve --port "$port" --max-concurrency $concurrency \
    --num-prompts $prompts --random-input-len 130 --random-output-len 64 \
    --random-range-ratio 0 --seed $concurrency
done
