#!/usr/bin/env bash
# -q / --quantization as vLLM takes them: a method name is accepted on every engine command and
# reaches the loader (which refuses it for a GGUF file, naming the method); an unknown value is
# refused as it is parsed, listing the GGUF types and the method names.
set -euo pipefail
binary="$1"
model="$2/models/stories260K.gguf"

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"

gguf_refusal="--quantization gptq names a Hugging Face checkpoint's quantization method"
expect_error "$gguf_refusal" "$binary" generate -q gptq --model "$model" --prompt "Once" \
  --max-tokens 2
expect_error "${gguf_refusal/gptq/awq_marlin}" "$binary" generate --quantization awq_marlin \
  --model "$model" --prompt "Once" --max-tokens 2
expect_error "$gguf_refusal" "$binary" bench latency -q gptq --model "$model" --input-len 4 \
  --output-len 2 --num-iters 1

listed="unsupported --quantization 'bogus' (supported: q8_0, q6_k, q4_k to quantize at load, or a \
checkpoint's method: awq, awq_marlin, gptq, gptq_marlin, fp8, compressed-tensors, bitsandbytes)"
for command in generate chat serve "bench throughput" "bench latency"; do
  # shellcheck disable=SC2086  # "bench latency" is two words
  expect_error "$listed" "$binary" $command --model "$model" --quantization bogus
  # shellcheck disable=SC2086
  expect_error "$listed" "$binary" $command --model "$model" -q bogus
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
vocab="$2/vocab/ggml-vocab-llama-spm.gguf"

# The GGUF types still quantize at load.
"$binary" make-random-model --shape llama-tiny --vocab "$vocab" --out "$work/tiny.gguf" >/dev/null
"$binary" generate -q q8_0 --model "$work/tiny.gguf" --prompt "Once upon a time" \
  --temperature 0 --max-tokens 4 >/dev/null

# A GPTQ checkpoint: -q gptq_marlin confirms its quantization_config, -q awq contradicts it.
"$binary" make-random-model --shape llama-tiny --vocab "$vocab" --out "$work/gptq" \
  --hf-dir "$2/tokenizers/llama2" --quantization gptq >/dev/null
"$binary" generate -q gptq_marlin --model "$work/gptq" --prompt "Once upon a time" \
  --temperature 0 --max-tokens 4 >/dev/null
expect_error "Quantization method specified in the model config (gptq) does not match the \
quantization method specified in the \`quantization\` argument (awq)." \
  "$binary" generate -q awq --model "$work/gptq" --prompt "Once" --max-tokens 2
echo "-q / --quantization: methods reach the loader, unknown values list the supported ones"
