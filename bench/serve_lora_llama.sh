#!/usr/bin/env bash
# Multi-LoRA serving side by side with llama-server (issue 45): each server holds the same 4 random
# rank-16 adapters on all seven targets as GGUF LoRA files (bench/make_random_lora.py --gguf) and
# takes 16 streaming clients, 4 on each adapter: four `bench serve` runs at once, run i naming
# adapter i in every request. llama-server loads them all with --lora-init-without-apply and a
# request picks its adapter with its `lora` field ([{"id": i, "scale": 1.0}]; the others stay at
# scale 0); `vllm-cpp serve` takes the adapter's name as the request's model. Throughput: the four
# runs' output tokens over the longest run's duration. Both get serve_vs_llama.sh's logit_bias
# against the byte tokens (llama-server fails a completion that ends in a partial UTF-8 character).
# Usage: [LLAMA_SERVER=path/to/llama-server] bench/serve_lora_llama.sh MODEL.gguf [port 8126]
#   [requests per adapter 12]
#   LLAMA_SERVER: default /tmp/llama/build/bin/llama-server (its libraries found beside it)
set -euo pipefail
cd "$(dirname "$0")/.."
model="$1"
port="${2:-8126}"
requests="${3:-12}"
llama_server="${LLAMA_SERVER:-/tmp/llama/build/bin/llama-server}"
adapters=/tmp/vllm-cpp-lora-bench
cmake --build build -j2 --target vllm-cpp >/dev/null
[ -f "$adapters/a3.gguf" ] || bench/make_random_lora.py --out "$adapters" --count 4 --gguf
source bench/serving_common.sh
runs=$(mktemp -d)
server=
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$runs"' EXIT
no_byte_tokens="\"logit_bias\": {$(seq -s, -f '"%g": -100' 3 258)}"

# Four runs of 4 clients and $requests requests each (130 random prompt tokens, 64 output tokens),
# run i on adapter i ($1: llama or vllm), then the sum over the runs.
run_clients() {
  local i
  local pids=()
  for i in 0 1 2 3; do
    local request_args=(--extra-body "{$no_byte_tokens}" --model "a$i")
    [ "$1" = llama ] &&
      request_args=(--extra-body "{\"lora\": [{\"id\": $i, \"scale\": 1.0}], $no_byte_tokens}")
    build/vllm-cpp bench serve --port "$port" --max-concurrency 4 --num-prompts "$requests" \
      --random-input-len 130 --random-output-len 64 --random-range-ratio 0 --seed $((i + 1)) \
      "${request_args[@]}" >"$runs/$1.$i" 2>&1 &
    pids+=($!)
  done
  for i in 0 1 2 3; do wait "${pids[$i]}" || echo "run $i on $1 had failed requests:" \
    "$(grep -h 'first error' "$runs/$1.$i")"; done
  awk -F: '/Successful requests/ { ok += $2 } /Total generated tokens/ { tokens += $2 }
    /Benchmark duration/ { if ($2 > longest) longest = $2 }
    /Mean TPOT/ { tpot += $2; n++ }
    END { printf "successful requests %d, output tokens %d in %.2f s: %.2f tok/s, " \
                 "mean TPOT %.1f ms\n", ok, tokens, longest, tokens / longest, tpot / n }' \
    "$runs/$1".?
}

echo "== llama-server ($llama_server), 4 adapters by the request's lora field"
LD_LIBRARY_PATH="$(dirname "$llama_server")" "$llama_server" -m "$model" -t 2 -np 16 -c 6400 \
  --host 127.0.0.1 --port "$port" --no-jinja --reasoning-format none --lora-init-without-apply \
  --lora "$adapters/a0.gguf" --lora "$adapters/a1.gguf" --lora "$adapters/a2.gguf" \
  --lora "$adapters/a3.gguf" >"$runs/llama-server.log" 2>&1 &
server=$!
wait_healthy "$port"
run_clients llama | tee "$runs/llama.sum"
kill $server
wait $server 2>/dev/null || true

echo "== vllm-cpp serve, 4 adapters by the request's model"
start_server "$model" "$port" --enable-lora --max-loras 4 --max-lora-rank 16 \
  --lora-modules "a0=$adapters/a0.gguf" "a1=$adapters/a1.gguf" "a2=$adapters/a2.gguf" \
  "a3=$adapters/a3.gguf"
run_clients vllm | tee "$runs/vllm.sum"
rate() { grep -o '[0-9.]* tok/s' "$runs/$1.sum" | cut -d' ' -f1; }
awk -v ours="$(rate vllm)" -v theirs="$(rate llama)" \
  'BEGIN { printf "vllm-cpp / llama-server output throughput: %.2fx\n", ours / theirs }'
