#!/usr/bin/env bash
# make-random-model --quantization through the binary's own option parsing: --bits, --group-size,
# --asym and --dequantized-out reach the writer (config.json says so, both directories load and
# generate), and options that do not apply are refused naming them.
set -euo pipefail
binary="$1"
vocab="$2/vocab/ggml-vocab-llama-spm.gguf"
tokenizer="$2/tokenizers/llama2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"

write() {  # write SHAPE OUT OPTIONS...
  local shape="$1" out="$2"
  shift 2
  "$binary" make-random-model --shape "$shape" --num-layers 2 --vocab "$vocab" --out "$out" \
    --hf-dir "$tokenizer" "$@"
}

# W8A16 pack-quantized per channel with zero points, and its dequantized twin.
write llama-tiny "$work/w8" --quantization w4a16 --bits 8 --group-size -1 --asym \
  --dequantized-out "$work/w8-dequantized"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
config = json.load(open(f"{work}/w8/config.json"))["quantization_config"]
weights = config["config_groups"]["group_0"]["weights"]
assert config["quant_method"] == "compressed-tensors", config
assert (weights["num_bits"], weights["strategy"], weights["symmetric"]) == (8, "channel", False), weights
assert "quantization_config" not in json.load(open(f"{work}/w8-dequantized/config.json"))
PY
for model in "$work/w8" "$work/w8-dequantized"; do
  "$binary" generate --model "$model" --prompt "Once upon a time" --temperature 0 \
    --max-tokens 2 >/dev/null 2>&1
done

# GPTQ with act order at 3 bits: g_idx and the 3-bit words in the file, bits in the config.
write llama-tiny "$work/gptq3" --quantization gptq-act --bits 3 --group-size 32
/usr/bin/python3 - "$work" <<'PY'
import json, sys
config = json.load(open(f"{sys.argv[1]}/gptq3/config.json"))["quantization_config"]
assert (config["bits"], config["group_size"], config["desc_act"], config["sym"]) == (3, 32, True, False), config
PY

# The formats beside: gptq_v2 zeros, AWQ's GEMV layout, compressed-tensors FP8 per tensor,
# bitsandbytes FP4. Each config says so, and each directory loads and generates.
write llama-tiny "$work/v2" --quantization gptq-v2 --asym --group-size 32
write llama-tiny "$work/gemv" --quantization awq-gemv --group-size 64
write llama-tiny "$work/ctfp8" --quantization ct-fp8-tensor
write llama-tiny "$work/fp4" --quantization bnb-fp4
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def config(name):
    return json.load(open(f"{work}/{name}/config.json"))["quantization_config"]
assert (config("v2")["checkpoint_format"], config("v2")["sym"]) == ("gptq_v2", False), config("v2")
assert (config("gemv")["version"], config("gemv")["group_size"]) == ("gemv", 64), config("gemv")
weights = config("ctfp8")["config_groups"]["group_0"]["weights"]
assert config("ctfp8")["format"] == "float-quantized", config("ctfp8")
assert (weights["type"], weights["strategy"]) == ("float", "tensor"), weights
assert config("fp4")["bnb_4bit_quant_type"] == "fp4", config("fp4")
PY
for model in v2 gemv ctfp8 fp4; do
  "$binary" generate --model "$work/$model" --prompt "Once upon a time" --temperature 0 \
    --max-tokens 2 >/dev/null 2>&1
done

expect_error "--quantization writes a model directory: it needs --hf-dir" \
  "$binary" make-random-model --shape llama-tiny --vocab "$vocab" --out "$work/x.gguf" \
  --quantization gptq
expect_error "--bits 3 does not apply to awq" write llama-tiny "$work/x" --quantization awq --bits 3
expect_error "--asym does not apply to fp8" write llama-tiny "$work/x" --quantization fp8 --asym
expect_error "need --quantization" write llama-tiny "$work/x" --group-size 64
expect_error "unknown format 'int3'" write llama-tiny "$work/x" --quantization int3
expect_error "--group-size 16 does not apply to awq-gemv" \
  write llama-tiny "$work/x" --quantization awq-gemv --group-size 16
expect_error "o_proj: 192 input features are not a multiple of the group size 128" \
  write qwen3moe-tiny "$work/x" --quantization gptq
[[ ! -e "$work/x" ]] || { echo "a refused write left $work/x behind"; exit 1; }
echo "make-random-model --quantization: options reach the writer, misuse is refused"
