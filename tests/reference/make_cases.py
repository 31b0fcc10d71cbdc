#!/usr/bin/env python3
"""Writes the cases that compare_transformers.py checks against Hugging Face transformers.

For each decoder architecture: a random-weight Hugging Face directory (F32, `make-random-model
--hf-dir`, over the 512-token stories260K vocabulary) and what `vllm-cpp serve` answers for four
prompts of 5-97 token ids in one /v1/completions request: 32 greedy tokens with their top-5
logprobs, and the prompts' top-5 prompt_logprobs, tokens named by id
(return_tokens_as_token_ids). Prompt chunks of 32 tokens (--max-num-batched-tokens) cross the
sliding windows (8 tokens) of Gemma 2 / 3 and gpt-oss, and decoding runs past them.

Usage: make_cases.py BUILD/vllm-cpp SHARED_DIR OUT_DIR (python3 standard library only)
"""
import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.request

PROMPT_LENGTHS = [5, 23, 48, 97]
# (case name, make-random-model shape, its extra flags, serve's extra flags, prompt lengths):
# every decoder family, each variant once.
CASES = [
    ("llama-tiny", "llama-tiny", [], [], PROMPT_LENGTHS),
    ("qwen2-tiny", "qwen2-tiny", [], [], PROMPT_LENGTHS),
    ("qwen3-tiny", "qwen3-tiny", [], [], PROMPT_LENGTHS),
    ("mixtral-tiny", "mixtral-tiny", [], [], PROMPT_LENGTHS),
    ("qwen3moe-tiny", "qwen3moe-tiny", [], [], PROMPT_LENGTHS),
    ("gemma2-tiny", "gemma2-tiny", [], [], PROMPT_LENGTHS),
    # Gemma 2 27B's query scale (hidden / heads) at 6 of its 46 layers.
    ("gemma2-27b-tiny", "gemma2-27b-tiny", ["--num-layers", "6"], [], PROMPT_LENGTHS),
    ("gemma3-tiny", "gemma3-tiny", [], [], PROMPT_LENGTHS),
    # LongRoPE: transformers takes the short factors for a sequence inside the original context
    # (256) and the long ones for all positions of a longer one; vLLM (and vllm-cpp) takes the
    # long ones whenever max_model_len exceeds it. So: a 256-token context with sequences under
    # 256, then the model's 1024 with sequences over 256.
    ("phi3-tiny", "phi3-tiny", [], ["--max-model-len", "256"], PROMPT_LENGTHS),
    ("phi3-tiny-long", "phi3-tiny", [], [], [240, 300]),
    ("gpt-oss-tiny", "gpt-oss-tiny", [], [], PROMPT_LENGTHS),
]
MAX_TOKENS = 32
TOP_LOGPROBS = 5
PORT = 8437


def post(path, body):
    request = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


def wait_ready(server):
    for _ in range(600):
        if server.poll() is not None:
            raise RuntimeError(f"server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def main():
    binary, shared, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    for case, shape, model_flags, serve_flags, prompt_lengths in CASES:
        rng = random.Random(2026)
        # Ids 3..511: the vocabulary's byte and word pieces (0-2 are unk / bos / eos).
        prompts = [[rng.randrange(3, 512) for _ in range(n)] for n in prompt_lengths]
        model_dir = os.path.join(out, case)
        shutil.rmtree(model_dir, ignore_errors=True)
        subprocess.run([binary, "make-random-model", "--shape", shape, "--seed", "7", "--vocab",
                        os.path.join(shared, "models/stories260K.gguf"), "--hf-dir",
                        os.path.join(shared, "tokenizers/llama2"), "--out", model_dir] + model_flags,
                       check=True, stdout=subprocess.DEVNULL)
        server = subprocess.Popen([binary, "serve", model_dir, "--port", str(PORT),
                                   "--max-num-batched-tokens", "32", "--threads", "2"] +
                                  serve_flags,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(server)
            response = post("/v1/completions", {
                "model": model_dir, "prompt": prompts, "max_tokens": MAX_TOKENS,
                "temperature": 0, "ignore_eos": True, "logprobs": TOP_LOGPROBS,
                "prompt_logprobs": TOP_LOGPROBS, "return_tokens_as_token_ids": True})
        finally:
            server.terminate()
            server.wait()
        # transformers reads config.json and the weights; the 32000-token tokenizer files that
        # the directory was written with are not needed there.
        for name in ("tokenizer.json", "tokenizer_config.json"):
            os.remove(os.path.join(model_dir, name))
        with open(os.path.join(model_dir, "vllm_cpp_response.json"), "w") as f:
            json.dump({"prompts": prompts, "response": response}, f)
        print(f"{case}: {len(response['choices'])} completions")


if __name__ == "__main__":
    main()
