#!/usr/bin/env python3
"""Writes the cases that compare_embeddings.py checks against transformers / sentence-transformers.

For each embedding shape: a random-weight Hugging Face directory (F32, `make-random-model --hf-dir`,
512-token vocabulary, with its sentence-transformers modules where the shape has them) and what
`vllm-cpp serve` answers on /v1/embeddings for three inputs of 5-40 token ids.

Usage: make_embedding_cases.py BUILD/vllm-cpp SHARED_DIR OUT_DIR (python3 standard library only)
"""
import json
import os
import random
import shutil
import subprocess
import sys

from make_cases import PORT, post, wait_ready

# (shape, serve's extra flags): Qwen3-Embedding's config names Qwen3ForCausalLM, which vLLM
# serves as an embedder with --runner pooling.
SHAPES = [("bert-tiny", []), ("bert-tiny-mean", []),
          ("qwen3-embedding-tiny", ["--runner", "pooling"]), ("embeddinggemma-tiny", [])]
INPUT_LENGTHS = [5, 17, 40]


def main():
    binary, shared, out = sys.argv[1:4]
    rng = random.Random(2026)
    inputs = [[rng.randrange(3, 512) for _ in range(n)] for n in INPUT_LENGTHS]
    os.makedirs(out, exist_ok=True)
    for shape, serve_flags in SHAPES:
        model_dir = os.path.join(out, shape)
        shutil.rmtree(model_dir, ignore_errors=True)
        subprocess.run([binary, "make-random-model", "--shape", shape, "--seed", "7", "--vocab",
                        os.path.join(shared, "models/stories260K.gguf"), "--hf-dir",
                        os.path.join(shared, "tokenizers/llama2"), "--out", model_dir],
                       check=True, stdout=subprocess.DEVNULL)
        server = subprocess.Popen([binary, "serve", model_dir, "--port", str(PORT), "--threads",
                                   "2"] + serve_flags, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            wait_ready(server)
            response = post("/v1/embeddings", {"model": model_dir, "input": inputs})
        finally:
            server.terminate()
            server.wait()
        with open(os.path.join(model_dir, "vllm_cpp_response.json"), "w") as f:
            json.dump({"inputs": inputs, "response": response}, f)
        print(f"{shape}: {len(response['data'])} embeddings")


if __name__ == "__main__":
    main()
