#!/usr/bin/env bash
# Multi-LoRA serving (issue 45): 16 streaming clients against one `vllm-cpp serve` holding 4 random
# rank-16 PEFT adapters on all seven targets (bench/make_random_lora.py), the requests spread over
# the adapters at random (bench serve --lora-modules), against the same server and workload with
# every request on the base; alternated ROUNDS times, so that each pair shares the machine's state.
# Usage: bench/serve_lora.sh MODEL.gguf [rounds 2] [port 8124]
set -euo pipefail
cd "$(dirname "$0")/.."
model="$1"
rounds="${2:-2}"
port="${3:-8124}"
adapters=/tmp/vllm-cpp-lora-bench
cmake --build build -j2 --target vllm-cpp >/dev/null
[ -f "$adapters/a3/adapter_config.json" ] || bench/make_random_lora.py --out "$adapters" --count 4
source bench/serving_common.sh
start_server "$model" "$port" --enable-lora --max-loras 4 --max-lora-rank 16 \
  --lora-modules "a0=$adapters/a0" "a1=$adapters/a1" "a2=$adapters/a2" "a3=$adapters/a3"
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for round in $(seq 1 "$rounds"); do
  for mix in base adapters; do
    lora=()
    [ "$mix" = adapters ] && lora=(--lora-modules a0 a1 a2 a3)
    echo "== round $round, $mix"
    build/vllm-cpp bench serve --port "$port" --max-concurrency 16 --num-prompts 48 \
      --random-input-len 130 --random-output-len 64 --random-range-ratio 0 --seed "$round" \
      "${lora[@]}" | grep -E "Successful|Output token throughput|Mean TPOT"
  done
done
