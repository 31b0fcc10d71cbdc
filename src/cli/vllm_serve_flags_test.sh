#!/usr/bin/env bash
# A `vllm serve` line as a deployment writes it (44 of vLLM's flags, some from --config FILE.yaml,
# short forms), run through the `vllm` command name: the server starts, warns once per flag that
# means nothing here, and serves a completion; --max-logprobs bounds requests. Then the refusals:
# parallelism, a max_model_len past the model's, a misspelled flag, a bad config key, and a
# `vllm` name over another program.
set -euo pipefail
binary="$1"
model="$2/models/stories260K.gguf"

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"
source "$(dirname "${BASH_SOURCE[0]}")/test_server.sh"

# Every flag docs/serve_flags.md calls implemented or mapped is a real option of `serve`.
help=$("$binary" serve --help)
docs="$(dirname "${BASH_SOURCE[0]}")/../../docs/serve_flags.md"
while read -r flag; do
  [[ "$flag" == --config ]] && continue  # read before the command line is parsed
  if ! grep -qE -- "(^|[ ,])$flag([ ,={]|$)" <<<"$help"; then
    echo "serve --help lacks $flag, which docs/serve_flags.md says is implemented or mapped"
    exit 1
  fi
done < <(grep -E '^\| `[^|]*\| [a-z ]*\| (implemented|mapped) \|' "$docs" | sed -E 's/^\| `([^`]*)`.*/\1/')

# The `vllm` name, installed into a directory of its own on a PATH with no other vllm.
mkdir "$work/bin"
PATH="$work/bin:/usr/bin:/bin" "$binary" install-vllm-alias "$work/bin" >/dev/null
vllm="$work/bin/vllm"
[[ -L "$vllm" ]] || { echo "no vllm link"; exit 1; }

cat >"$work/serve.yaml" <<'EOF'
port: 1                      # the command line's --port overrides it
max_num_seqs: 8
enable_prefix_caching: true
max-num-batched-tokens: 256
--kv-cache-dtype: auto
served_model_name: [stories]
EOF

# TLS, the hub's files and --root-path have tests of their own (tls, hub_models, serving_flags);
# here they appear with the values a plain deployment gives them.
start_server "$work/log" "Serving stories on http://127.0.0.1:[0-9]" "$vllm" serve "$model" \
  --config "$work/serve.yaml" --host 127.0.0.1 --port 0 --api-key secret \
  --trust-remote-code --seed 42 --enforce-eager --gpu-memory-utilization 0.01 \
  --max-logprobs 5 --enable-chunked-prefill --swap-space 4 -tp 1 -pp=1 -dp 1 \
  --dtype auto --max-model-len 256 --block-size 16 --disable-log-stats \
  --uvicorn-log-level info --disable-custom-all-reduce --distributed-executor-backend mp \
  --tokenizer-mode auto --no-skip-tokenizer-init --load-format auto --max-seq-len-to-capture 8192 \
  --disable-frontend-multiprocessing --chat-template-content-format auto \
  --enable-auto-tool-choice --tool-call-parser hermes --generation-config auto \
  --num-scheduler-steps 1 --compilation-config '{"level": 3}' --cuda-graph-sizes 1 2 4 \
  --max-num-partial-prefills 1 --scheduling-policy fcfs --disable-uvicorn-access-log \
  --data-parallel-size-local 1 --prefix-caching-hash-algo sha256 --max-loras 1 -O3 \
  --limit-mm-per-prompt '{"image": 0}' --no-enable-prompt-embeds --max_num_seqs 8 \
  --disable-log-requests --max-log-len 100 --response-role assistant --root-path /api \
  --download-dir "$work/hf" --revision main --tokenizer "$model" \
  --task generate --guided-decoding-backend xgrammar --guided-decoding-disable-fallback \
  --logprobs-mode raw_logits --disable-sliding-window --config-format hf \
  --override-pooler-config '{"pooling_type": "MEAN"}' --hf-token
port=$(served_port "$work/log")

for flag in --trust-remote-code --enforce-eager --swap-space --disable-custom-all-reduce \
  --compilation-config; do
  count=$(grep -c "vLLM's $flag.* is accepted and ignored" "$work/log" || true)
  [[ "$count" == 1 ]] || { cat "$work/log"; echo "$flag: $count warnings, not 1"; exit 1; }
done
# What this build does anyway is silent.
if grep -q "enable-chunked-prefill\|tensor-parallel-size\|tokenizer-mode" "$work/log"; then
  cat "$work/log"
  echo "a flag that changes nothing here warned"
  exit 1
fi

completion=$(curl -sS "http://127.0.0.1:$port/v1/completions" -H "Authorization: Bearer secret" \
  -H "Content-Type: application/json" \
  -d '{"model": "stories", "prompt": "Once upon a time", "max_tokens": 8, "temperature": 0}')
[[ "$completion" == *'there was a little girl'* ]] || { echo "completion: $completion"; exit 1; }

too_many=$(curl -sS -o "$work/too_many" -w '%{http_code}' \
  "http://127.0.0.1:$port/v1/completions" -H "Authorization: Bearer secret" \
  -H "Content-Type: application/json" \
  -d '{"model": "stories", "prompt": "Once", "max_tokens": 2, "logprobs": 6}')
[[ "$too_many" == 400 ]] || { echo "logprobs 6 over --max-logprobs 5: $too_many"; exit 1; }
grep -q "greater than max allowed: 5" "$work/too_many"
# --logprobs-mode raw_logits: the greedy token's value is its logit (here above 0), which no
# log-probability is.
raw_logit=$(curl -sS "http://127.0.0.1:$port/v1/completions" -H "Authorization: Bearer secret" \
  -H "Content-Type: application/json" \
  -d '{"model": "stories", "prompt": "Once upon a time", "max_tokens": 1, "temperature": 0,
       "logprobs": 1}' | sed -n 's/.*"token_logprobs":\[\([^],]*\)\].*/\1/p')
awk -v value="$raw_logit" 'BEGIN { exit !(value > 0) }' || { echo "raw logit: $raw_logit"; exit 1; }
grep -q -- "--task generate is deprecated" "$work/log" || { cat "$work/log"; echo "no --task warning"; exit 1; }
stop_server

expect_error "pipeline_parallel_size (-pp/--pipeline-parallel-size) must be 1 to 64, got 0" \
  "$vllm" serve "$model" -pp 0
expect_error "--data-parallel-size 2: data parallelism is not implemented yet (issue 46)" \
  "$vllm" generate "$model" -dp 2 --prompt hi
expect_error "tensor_parallel_size (-tp/--tensor-parallel-size) must be 1 to 64, got 65" \
  "$vllm" serve "$model" -tp 65
expect_error "tensor_parallel_size (-tp/--tensor-parallel-size) must be 1 to 64, got 0" \
  "$vllm" generate "$model" -tp 0 --prompt hi
expect_error "--pooler-config: step_tag_id is not supported" "$vllm" serve "$model" \
  --pooler-config '{"step_tag_id": 3}'
expect_error "--task reward: reward models" "$vllm" serve "$model" --task reward
expect_error "--guided-decoding-backend llguidance2: not one of vLLM's backends" \
  "$vllm" serve "$model" --guided-decoding-backend llguidance2
expect_error "--generation-config $work/none: not auto, vllm or a directory" \
  "$vllm" serve "$model" --generation-config "$work/none"
expect_error "--config-format mistral: " "$vllm" serve "$model" --config-format mistral
expect_error "User-specified max_model_len (100000) is greater than the derived max_model_len" \
  "$vllm" serve "$model" --max-model-len 100000 --port 0
expect_error "The following argument was not expected: --enforce-eagre" \
  "$vllm" serve "$model" --enforce-eagre
printf 'port: 1\nenforce_eagre: true\n' >"$work/bad.yaml"
expect_error "line 2: unknown key 'enforce_eagre'" "$vllm" serve "$model" --config "$work/bad.yaml"

# --override-attention-dtype picks the KV cache dtype attention reads (stories260K's F32 weights
# would take float32), and conflicts with another explicit --kv-cache-dtype.
start_server "$work/dtype_log" "on unix:$work/dtype.sock" "$vllm" serve "$model" \
  --override-attention-dtype bfloat16 --uds "$work/dtype.sock" --log-stats-interval 0
grep -q "KV cache: .* bfloat16 (" "$work/dtype_log" || {
  cat "$work/dtype_log"
  echo "--override-attention-dtype bfloat16: the KV cache is not bfloat16"
  exit 1
}
stop_server
expect_error "--override-attention-dtype float32 conflicts with --kv-cache-dtype int8" \
  "$vllm" serve "$model" --override-attention-dtype float32 --kv-cache-dtype int8

# Never over, nor beside, another vllm.
mkdir "$work/real" "$work/bin2"
printf '#!/bin/sh\necho real vllm\n' >"$work/real/vllm"
chmod +x "$work/real/vllm"
expect_error "is another program (a real vLLM?)" env PATH="$work/real:/usr/bin:/bin" \
  "$binary" install-vllm-alias "$work/bin2"
expect_error "exists and is not a link to this binary" env PATH="/usr/bin:/bin" \
  "$binary" install-vllm-alias "$work/real"
echo "vllm serve: 44 flags accepted, refusals named, the vllm name installed only beside no other"
