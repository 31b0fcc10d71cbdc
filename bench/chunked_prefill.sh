#!/usr/bin/env bash
# Chunked prefill (BENCHMARKS.md workload 6): one 2,000-token prompt arriving 5 s into 16
# requests that are decoding, against `vllm-cpp serve` on the TinyLlama-1.1B shape, once per
# --max-num-batched-tokens value: the long prompt's TTFT and the decoders' inter-token latency
# while it is prefilled.
# Usage: bench/chunked_prefill.sh [model, default /tmp/vllm-cpp-models/tinyllama-q8_0.gguf]
#   [budgets, default "128 256 512 2048"] [port 8124]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-/tmp/vllm-cpp-models/tinyllama-q8_0.gguf}"
budgets="${2:-128 256 512 2048}"
port="${3:-8124}"
cmake --build build -j2 --target vllm-cpp >/dev/null
source bench/serving_common.sh
ensure_model "$model"
for budget in $budgets; do
  start_server "$model" "$port" --max-num-batched-tokens "$budget"
  trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
  echo "== --max-num-batched-tokens $budget"
  build/vllm-cpp bench serve --port "$port" --max-concurrency 16 --num-prompts 16 \
    --random-input-len 32 --random-output-len 256 --random-range-ratio 0 \
    --long-prompt-len 2000 --long-prompt-delay 5
  kill $server
  wait $server 2>/dev/null || true
done
