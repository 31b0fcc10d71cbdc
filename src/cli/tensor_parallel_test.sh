#!/usr/bin/env bash
# Tensor parallelism through the binary, as a user runs it: `-tp 2` starts two Open MPI ranks on
# this host by itself. generate gives the same greedy text as one process on the demo model, over
# shared memory and forced onto TCP over loopback; the K-quant oracle's prompts keep llama.cpp's
# prefixes with -tp 2; serve -tp 2 answers a completion, and when a worker rank is killed the
# server's job ends with a non-zero status instead of hanging. Then the start errors of bad sizes
# (a rank's error ends every rank).
set -euo pipefail
binary="$1"
shared="$2"
model="$shared/models/stories260K.gguf"

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"
source "$(dirname "${BASH_SOURCE[0]}")/test_server.sh"

generate() {  # generate MODEL PROMPT FLAGS...: the greedy continuation on stdout
  local model_path="$1" prompt="$2"
  shift 2
  timeout 120 "$binary" generate --model "$model_path" --prompt "$prompt" --temperature 0 \
    --max-tokens 40 -t 1 "$@" 2>"$work/generate.log" ||
    { cat "$work/generate.log" >&2; echo "generate failed: $*" >&2; exit 1; }
}

one=$(generate "$model" "Once upon a time")
two=$(generate "$model" "Once upon a time" -tp 2)
[[ "$two" == "$one" ]] || { printf -- '-tp 1: %s\n-tp 2: %s\n' "$one" "$two"; exit 1; }
grep -q "tensor parallel: starting 2 ranks: mpirun -np 2" "$work/generate.log"
grep -q "tensor parallel rank 1 of 2: shard loaded" "$work/generate.log"
tcp=$(OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo generate "$model" "Once upon a time" \
  --tensor-parallel-size 2)
[[ "$tcp" == "$one" ]] || { printf -- '-tp 1: %s\n-tp 2 over TCP: %s\n' "$one" "$tcp"; exit 1; }

# A shared oracle: every prompt's greedy output starts with llama.cpp's prefix. (Its K-quant
# siblings' 256-wide blocks do not split into two ranks' 128 columns: a start error, below.)
oracle="$shared/oracles/greedy/tiny-llama-d256-q8_0.json"
while IFS=$'\t' read -r prompt prefix; do
  out=$(generate "$shared/oracles/models/tiny-llama-d256-q8_0.gguf" "$prompt" -tp 2 \
    --max-model-len 4096)
  [[ "$out" == "$prefix"* ]] || { printf 'prompt %s\nexpected prefix: %s\ngot: %s\n' \
    "$prompt" "$prefix" "$out"; exit 1; }
done < <(python3 -c '
import json, sys
for case in json.load(open(sys.argv[1]))["cases"]:
    print(case["prompt"] + "\t" + case["expected_prefix"])' "$oracle")

# serve -tp 2: a completion, then a worker rank killed ends the whole job with an error.
start_server "$work/serve.log" "Serving .* on http://127.0.0.1:[0-9]" \
  "$binary" serve "$model" --served-model-name stories --host 127.0.0.1 --port 0 -tp 2 -t 1 \
  --max-model-len 256
expect_stories_completion "$work/serve.log"
expect_exit_after_rank_killed "serve -tp 2"

# Bad sizes stop at start with the reason.
expect_error "tensor_parallel_size (-tp/--tensor-parallel-size) must be 1 to 64, got 0" \
  "$binary" generate "$model" -tp 0 --prompt hi
expect_error "tensor_parallel_size (-tp/--tensor-parallel-size) must be 1 to 64, got 65" \
  "$binary" serve "$model" -tp 65
expect_error "Total number of attention heads (8) must be divisible by tensor parallel size (3)" \
  "$binary" generate "$model" -tp 3 -t 1 --prompt hi
expect_error "tensor parallel size 2: blk.0.attn_output.weight has 128 input columns per rank" \
  "$binary" generate "$shared/oracles/models/tiny-llama-d256-q4_k_m.gguf" -tp 2 -t 1 --prompt hi
expect_error "tensor_parallel_size 8 x pipeline_parallel_size 9 is more than 64 ranks" \
  "$binary" chat "$model" -tp 8 -pp 9
