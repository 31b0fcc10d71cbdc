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
if [ ! -f "$model" ]; then
  mkdir -p "$(dirname "$model")"
  build/vllm-cpp make-random-model --shape tinyllama-1.1b --dtype q8_0 \
    --vocab ../shared/vocab/ggml-vocab-llama-spm.gguf --out "$model"
fi
build/vllm-cpp serve "$model" --host 127.0.0.1 --port "$port" -t 2 --log-stats-interval 0 \
  2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.2
done
for concurrency in 1 4 16 32; do
  prompts=$((concurrency * 4))
  [ $prompts -lt 8 ] && prompts=8
  echo "== concurrency $concurrency, $prompts prompts"
  build/vllm-cpp bench serve --port "$port" --max-concurrency $concurrency \
    --num-prompts $prompts --random-input-len 130 --random-output-len 64 \
    --random-range-ratio 0 --seed $concurrency
done
