#!/usr/bin/env bash
# Pipeline parallelism through the binary, as a user runs it: `-pp 2` starts two Open MPI ranks
# (stages) on this host by itself. On the demo model a batch of prompts long enough to be cut into
# micro-batches gives one process's greedy text, over shared memory, over TCP, with three stages
# and with two stages of two tensor-parallel ranks, and a prompt alone gives its line of the
# batch; every shared llama.cpp oracle (K-quants, qwen3moe, phi3, gemma3) keeps llama.cpp's greedy
# prefixes with -pp 2 (the Q8_0 one with -tp 2 -pp 2); serve -pp 2 answers a
# completion and ends with an error when a stage is killed, and answers /health 503 then ends
# when a stage stops answering. Then the start errors of bad sizes.
set -euo pipefail
binary="$1"
shared="$2"
model="$shared/models/stories260K.gguf"

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"
source "$(dirname "${BASH_SOURCE[0]}")/test_server.sh"

generate() {  # generate MODEL PROMPTS_FILE FLAGS...: one JSON line per prompt on stdout
  local model_path="$1" prompts="$2"
  shift 2
  timeout 300 "$binary" generate --model "$model_path" --prompts-file "$prompts" \
    --temperature 0 --ignore-eos -t 1 "$@" 2>"$work/generate.log" ||
    { cat "$work/generate.log" >&2; echo "generate failed: $*" >&2; exit 1; }
}

# Eight prompts of about 30 tokens: a prefill step of over 200 tokens, cut into micro-batches.
for i in 1 2 3 4 5 6 7 8; do
  echo "Once upon a time, there was a little girl named Lily number $i. She loved to play outside"
done >"$work/prompts.txt"
one=$(generate "$model" "$work/prompts.txt" --max-tokens 24)
two=$(generate "$model" "$work/prompts.txt" --max-tokens 24 -pp 2)
[[ "$two" == "$one" ]] || { printf -- '-pp 1:\n%s\n-pp 2:\n%s\n' "$one" "$two"; exit 1; }
grep -q "pipeline parallel: starting 2 ranks: mpirun -np 2" "$work/generate.log"
grep -q "pipeline parallel rank 1 of 2: shard loaded" "$work/generate.log"
grep -q "pipeline stage 1 of 2 (layers [0-9]*-[0-9]*): waited .* (the pipeline bubble)" \
  "$work/generate.log"
tcp=$(OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo generate "$model" "$work/prompts.txt" \
  --max-tokens 24 --pipeline-parallel-size 2)
[[ "$tcp" == "$one" ]] || { printf -- '-pp 1:\n%s\n-pp 2 over TCP:\n%s\n' "$one" "$tcp"; exit 1; }
# Tensor and pipeline parallel together: two stages of two ranks each (vLLM's rank order).
four=$(generate "$model" "$work/prompts.txt" --max-tokens 24 -tp 2 -pp 2)
[[ "$four" == "$one" ]] || { printf -- '-pp 1:\n%s\n-tp 2 -pp 2:\n%s\n' "$one" "$four"; exit 1; }
grep -q "tensor and pipeline parallel: starting 4 ranks: mpirun -np 4" "$work/generate.log"
three=$(generate "$model" "$work/prompts.txt" --max-tokens 24 -pp 3)
[[ "$three" == "$one" ]] || { printf -- '-pp 1:\n%s\n-pp 3:\n%s\n' "$one" "$three"; exit 1; }
# VLLM_PP_LAYER_PARTITION moves the cut; the text stays.
moved=$(VLLM_PP_LAYER_PARTITION=1,4 generate "$model" "$work/prompts.txt" --max-tokens 24 -pp 2)
[[ "$moved" == "$one" ]] || { printf -- '-pp 1:\n%s\n-pp 2 (1,4):\n%s\n' "$one" "$moved"; exit 1; }
grep -q "pipeline stage 1 of 2 (layers 1-4)" "$work/generate.log"
# The third prompt alone is its line of the batch.
sed -n 3p "$work/prompts.txt" >"$work/alone.txt"
alone=$(generate "$model" "$work/alone.txt" --max-tokens 24 -pp 2)
[[ "$(echo "$alone" | sed 's/"index":0/"index":2/')" == "$(echo "$one" | sed -n 3p)" ]] ||
  { printf 'alone: %s\nbatched: %s\n' "$alone" "$(echo "$one" | sed -n 3p)"; exit 1; }

# Every shared greedy oracle: each prompt's output starts with llama.cpp's prefix.
for oracle in "$shared"/oracles/greedy/*.json; do
  name=$(basename "$oracle" .json)
  python3 -c '
import json, sys
for case in json.load(open(sys.argv[1]))["cases"]:
    print(case["prompt"])' "$oracle" >"$work/oracle_prompts.txt"
  # -tp 2 splits Q8_0 (32-wide blocks) but not the K-quants' 256-wide blocks of 128 columns.
  flags=(-pp 2)
  [[ "$name" == *q8_0 ]] && flags=(-tp 2 -pp 2)
  generate "$shared/oracles/models/$name.gguf" "$work/oracle_prompts.txt" "${flags[@]}" \
    --max-tokens 40 --max-model-len 4096 >"$work/oracle_out.jsonl"
  python3 -c '
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
outputs = [json.loads(line) for line in open(sys.argv[2])]
assert len(outputs) == len(cases), (len(outputs), len(cases))
for case, output in zip(cases, outputs):
    if not output["text"].startswith(case["expected_prefix"]):
        sys.exit("%s: prompt %r\nexpected prefix: %r\ngot: %r" % (
            sys.argv[3], case["prompt"], case["expected_prefix"], output["text"]))' \
    "$oracle" "$work/oracle_out.jsonl" "$name"
done

# serve -pp 2: a completion, then a stage killed ends the whole job with an error.
start_server "$work/serve.log" "Serving .* on http://127.0.0.1:[0-9]" \
  "$binary" serve "$model" --served-model-name stories --host 127.0.0.1 --port 0 -pp 2 -t 1 \
  --max-model-len 256
expect_stories_completion "$work/serve.log"
expect_exit_after_rank_killed "serve -pp 2"

# A stage that stops answering (SIGSTOP) without dying: after VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS
# /health answers 503 with the reason, then the job ends non-zero instead of hanging.
VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=2 start_server "$work/serve.log" \
  "Serving .* on http://127.0.0.1:[0-9]" "$binary" serve "$model" --host 127.0.0.1 --port 0 \
  -pp 2 -t 1 --max-model-len 256
port=$(served_port "$work/serve.log")
[[ $(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health") == 200 ]]
kill -STOP "$(rank_one_of_server)"
curl -sS -m 60 "http://127.0.0.1:$port/v1/completions" -H "Content-Type: application/json" \
  -d '{"prompt": "Once upon a time", "max_tokens": 8}' >/dev/null 2>&1 &
health=""
for _ in $(seq 1 100); do
  health=$(curl -sS -m 1 -w ' %{http_code}' "http://127.0.0.1:$port/health" 2>/dev/null || true)
  [[ "$health" == *" 503" ]] && break
  sleep 0.1
done
[[ "$health" == *"has not finished in 2 s (VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS): a rank stopped answering"*" 503" ]] ||
  { cat "$work/serve.log"; echo "/health after a stage stopped: $health"; exit 1; }
expect_server_exit "serve -pp 2 with a stage stopped" 20
expect_error "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS='soon': expected a positive number of seconds" \
  env VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=soon "$binary" generate "$model" -pp 2 -t 1 --prompt hi

# Bad sizes stop at start with the reason.
expect_error "pipeline_parallel_size (-pp/--pipeline-parallel-size) must be 1 to 64, got 65" \
  "$binary" generate "$model" -pp 65 --prompt hi
expect_error "pipeline_parallel_size (-pp/--pipeline-parallel-size) 6 is more than the model's 5 layers" \
  "$binary" generate "$model" -pp 6 -t 1 --prompt hi
expect_error "VLLM_PP_LAYER_PARTITION='2,2' gives 2 stages 4 layers" \
  env VLLM_PP_LAYER_PARTITION=2,2 "$binary" generate "$model" -pp 2 -t 1 --prompt hi
