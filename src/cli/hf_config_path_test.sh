#!/usr/bin/env bash
# --hf-config-path: a model directory whose own config.json is wrong (another rope_theta and a
# shorter context) generates, with --hf-config-path at a directory holding the right config, the
# same greedy text as the unaltered model, and `serve` (here on --uds, read with curl
# --unix-socket) reports the right context; a GGUF model and a directory with no config.json are
# refused, naming the flag.
set -euo pipefail
binary="$1"
shared="$2"

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"
source "$(dirname "${BASH_SOURCE[0]}")/test_server.sh"

"$binary" make-random-model --shape llama-tiny --vocab "$shared/vocab/ggml-vocab-llama-spm.gguf" \
  --out "$work/model" --hf-dir "$shared/tokenizers/llama2" >/dev/null
mkdir "$work/right"
cp "$work/model/config.json" "$work/right/config.json"
greedy() {
  "$binary" generate --model "$work/model" --prompt "Once upon a time" --temperature 0 \
    --max-tokens 12 "$@" 2>/dev/null
}
expected=$(greedy)

python3 - "$work/model/config.json" <<'PY'
import json, sys
path = sys.argv[1]
config = json.load(open(path))
config["rope_theta"] = 3.0
config["max_position_embeddings"] = 64
json.dump(config, open(path, "w"))
PY
altered=$(greedy)
[[ "$altered" != "$expected" ]] || { echo "the altered config.json changed nothing"; exit 1; }
with_path=$(greedy --hf-config-path "$work/right")
[[ "$with_path" == "$expected" ]] || {
  printf 'with --hf-config-path: %s\nexpected: %s\n' "$with_path" "$expected"
  exit 1
}

right_len=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["max_position_embeddings"])' \
  "$work/right/config.json")
start_server "$work/log" "Serving tiny on unix:$work/serve.sock" "$binary" serve "$work/model" \
  --hf-config-path "$work/right" --uds "$work/serve.sock" --served-model-name tiny \
  --log-stats-interval 0
models=$(curl -sS --unix-socket "$work/serve.sock" http://localhost/v1/models)
[[ "$models" == *"\"max_model_len\":$right_len"* ]] || {
  echo "/v1/models over --uds: $models (expected max_model_len $right_len)"
  exit 1
}
stop_server
[[ ! -e "$work/serve.sock" ]] || { echo "the socket file outlived the server"; exit 1; }

expect_error "--hf-config-path $work/right is for a Hugging Face model directory; a GGUF model \
takes its config from its own metadata" \
  "$binary" generate --model "$shared/models/stories260K.gguf" --hf-config-path "$work/right" \
  --prompt "Once" --max-tokens 2
mkdir "$work/empty"
expect_error "--hf-config-path $work/empty: no config.json in $work/empty" \
  "$binary" generate --model "$work/model" --hf-config-path "$work/empty" --prompt "Once" \
  --max-tokens 2
echo "--hf-config-path: the given config.json is the one read; GGUF and missing configs refused"
