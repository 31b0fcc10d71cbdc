#!/usr/bin/env bash
# --rope-theta, --rope-scaling and --hf-overrides on the demo GGUF, as a vLLM command line gives
# them: serve starts and /v1/models' max_model_len follows the overridden context (raised by a
# linear scaling factor, as vLLM derives it); the engine commands take the flags; what a GGUF file
# cannot honour is refused naming it.
set -euo pipefail
binary="$1"
model="$2/models/stories260K.gguf"

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"
source "$(dirname "${BASH_SOURCE[0]}")/test_server.sh"

# serve_max_model_len EXPECTED FLAG...: serve starts with the flags; /v1/models says EXPECTED.
serve_max_model_len() {
  local expected="$1"
  shift
  start_server "$work/log" "Serving stories on http://127.0.0.1:[0-9]" "$binary" serve "$model" \
    --host 127.0.0.1 --port 0 --served-model-name stories "$@"
  local port models
  port=$(served_port "$work/log")
  models=$(curl -sS "http://127.0.0.1:$port/v1/models")
  [[ "$models" == *"\"max_model_len\":$expected"* ]] ||
    { echo "$*: /v1/models $models, expected max_model_len $expected"; exit 1; }
  local completion
  completion=$(curl -sS "http://127.0.0.1:$port/v1/completions" \
    -H "Content-Type: application/json" \
    -d '{"model": "stories", "prompt": "Once upon a time", "max_tokens": 4}')
  [[ "$completion" == *'"finish_reason"'* ]] || { echo "$*: completion $completion"; exit 1; }
  stop_server
}

serve_max_model_len 2048
serve_max_model_len 512 --rope-theta 20000 --hf-overrides '{"max_position_embeddings": 512}'
serve_max_model_len 1024 --hf-overrides '{"max_position_embeddings": 512}' \
  --rope-scaling '{"rope_type": "linear", "factor": 2.0}'

# The engine commands take them too.
"$binary" generate --model "$model" --prompt "Once" --max-tokens 2 --rope-theta 20000 \
  --rope-scaling '{"type": "yarn", "factor": 2, "original_max_position_embeddings": 2048}' \
  >/dev/null
"$binary" bench latency --model "$model" --input-len 4 --output-len 2 --num-iters 1 \
  --rope-theta 20000 >/dev/null

expect_error "--rope-scaling must be a JSON object" "$binary" serve "$model" --rope-scaling '{'
expect_error "--rope-theta: rope_theta must be a positive number" \
  "$binary" generate --model "$model" --rope-theta -1
expect_error "rope_scaling type 'llama3' has no GGUF metadata" \
  "$binary" generate --model "$model" --prompt "Once" --rope-scaling '{"rope_type": "llama3"}'
expect_error "key 'tie_word_embeddings' has no GGUF metadata twin" \
  "$binary" serve "$model" --port 0 --hf-overrides '{"tie_word_embeddings": false}'
expect_error "is greater than the derived max_model_len" \
  "$binary" serve "$model" --port 0 --max-model-len 1024 \
  --hf-overrides '{"max_position_embeddings": 512}'
echo "rope overrides: ok"
