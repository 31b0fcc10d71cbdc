#!/usr/bin/env bash
# Issue 14's serving sweep side by side: llama-server and `vllm-cpp serve` on the same file, one
# after the other at each concurrency (170-token random prompts, 64 output tokens, ignore_eos,
# streaming, closed loop; 2 threads each). llama-server gets one slot per client and 400 tokens
# of context per slot. Both servers get the same logit_bias against the Llama vocabulary's 256
# byte tokens (ids 3-258), so that no output holds a partial UTF-8 character: llama-server's
# output parser fails such a completion with HTTP 500 after generating it.
# Usage: LLAMA_BIN=path/to/llama.cpp/build/bin bench/serve_vs_llama.sh MODEL ["1 4 16 32"]
#   [port 8140]
set -euo pipefail
cd "$(dirname "$0")/.."
model="$1"
levels="${2:-1 4 16 32}"
port="${3:-8140}"
: "${LLAMA_BIN:?set LLAMA_BIN to the llama.cpp build/bin directory}"
cmake --build build -j2 --target vllm-cpp >/dev/null
source bench/serving_common.sh

no_byte_tokens="{\"logit_bias\": {$(seq -s, -f '"%g": -100' 3 258)}}"

run_client() {  # $1 concurrency; failed requests are reported, not fatal
  local prompts=$(($1 * 2))
  [ $prompts -lt 8 ] && prompts=8
  build/vllm-cpp bench serve --port "$port" --max-concurrency "$1" --num-prompts $prompts \
    --random-input-len 170 --random-output-len 64 --random-range-ratio 0 --seed "$1" \
    --extra-body "$no_byte_tokens" || true
}

for concurrency in $levels; do
  echo "== llama-server, concurrency $concurrency"
  LD_LIBRARY_PATH="$LLAMA_BIN" "$LLAMA_BIN/llama-server" -m "$model" -t 2 -np "$concurrency" \
    -c $((concurrency * 400)) --host 127.0.0.1 --port "$port" --no-jinja \
    --reasoning-format none >/dev/null 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
  wait_healthy "$port"
  run_client "$concurrency"
  kill $server
  wait $server 2>/dev/null || true
  echo "== vllm-cpp, concurrency $concurrency"
  start_server "$model" "$port"
  run_client "$concurrency"
  kill $server
  wait $server 2>/dev/null || true
done
