#!/usr/bin/env bash
# LoRA flags as vLLM's serve takes them: --lora-modules items (name=path or JSON) load at start,
# and a bad one stops serve with the loader's message before it listens; the engine flags'
# values are checked as vLLM's; generate runs its prompts with one --lora-modules adapter.
set -euo pipefail
binary="$1"
oracle="$2/oracles/lora"
if [ ! -f "$oracle/base.gguf" ]; then
  echo "LoRA oracle not found: $oracle" >&2
  exit 1
fi

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"

serve=("$binary" serve "$oracle/base.gguf" --host 127.0.0.1 --port 0)
expect_error "--lora-modules needs --enable-lora" "${serve[@]}" --lora-modules "sql=$oracle/sql.gguf"
expect_error "Invalid JSON format for --lora-modules: sql" "${serve[@]}" --enable-lora \
  --lora-modules sql
expect_error "Invalid fields for --lora-modules: {\"name\": \"sql\", \"rank\": 8} - unexpected \
keyword argument 'rank'" "${serve[@]}" --enable-lora --lora-modules '{"name": "sql", "rank": 8}'
expect_error "No adapter found for $oracle/missing" "${serve[@]}" --enable-lora \
  --lora-modules "sql=$oracle/sql.gguf" "missing=$oracle/missing"
# The second module is the one at fault: its name and the limit are in the message.
expect_error "Loading lora poet failed" "${serve[@]}" --enable-lora --max-lora-rank 8 \
  --lora-modules "sql=$oracle/sql-peft" "{\"name\": \"poet\", \"path\": \"$oracle/poet-peft\"}"
expect_error "Both 'lora_name' and 'lora_path' must be provided." "${serve[@]}" --enable-lora \
  --lora-modules "sql="
expect_error "max_lora_rank (4) must be one of" "${serve[@]}" --enable-lora --max-lora-rank 4
expect_error "max_cpu_loras (1) must be >= max_loras (2)" "${serve[@]}" --enable-lora \
  --max-loras 2 --max-cpu-loras 1
expect_error "--lora-dtype: float64 not in {auto,float16,bfloat16,float32}" "${serve[@]}" \
  --enable-lora --lora-dtype float64

# generate: every prompt with the one adapter, llama.cpp's greedy output.
prompt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cases"][0]["prompt"])' \
  "$oracle/greedy/sql.json")
expected=$(python3 -c \
  'import json,sys; print(json.load(open(sys.argv[1]))["cases"][0]["expected_prefix"])' \
  "$oracle/greedy/sql.json")
text=$("$binary" generate "$oracle/base.gguf" --enable-lora --lora-modules "sql=$oracle/sql.gguf" \
  --prompt "$prompt" --temperature 0 --max-tokens 64 --kv-cache-memory-bytes 67108864 2>/dev/null)
if [[ "$text" != "$expected"* ]]; then
  printf 'generate with sql: %q\nexpected to start with: %q\n' "$text" "$expected"
  exit 1
fi
expect_error "generate runs one adapter" "$binary" generate "$oracle/base.gguf" --enable-lora \
  --lora-modules "sql=$oracle/sql.gguf" "poet=$oracle/poet-peft" --prompt "$prompt"

# bench serve --lora-modules: each request names one of the adapters (vLLM's option); a name the
# server does not serve fails those requests.
source "$(dirname "${BASH_SOURCE[0]}")/test_server.sh"
start_server "$work/serve.log" "Serving" "${serve[@]}" --enable-lora --max-loras 2 \
  --lora-modules "sql=$oracle/sql.gguf" "poet=$oracle/poet-peft" --kv-cache-memory-bytes 67108864
port=$(served_port "$work/serve.log")
bench=("$binary" bench serve --port "$port" --num-prompts 8 --max-concurrency 4 \
  --random-input-len 8 --random-output-len 4 --vocab-size 512)
"${bench[@]}" --lora-modules sql poet >"$work/bench.log"
grep -q "Successful requests: *8$" "$work/bench.log" || { cat "$work/bench.log"; exit 1; }
if "${bench[@]}" --lora-modules sql nope >"$work/bench_unknown.log" 2>&1; then
  echo "requests naming an unknown adapter succeeded"
  exit 1
fi
grep -q "The model \`nope\` does not exist" "$work/bench_unknown.log" || {
  cat "$work/bench_unknown.log"
  exit 1
}
stop_server
