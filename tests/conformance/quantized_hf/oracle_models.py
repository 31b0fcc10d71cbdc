#!/usr/bin/env python3
"""Writes the quantized-HF oracle's checkpoints (../shared/oracles/quantized_hf) into a directory.

Runs the shared generator, make_quantized_hf_oracle.py, with the oracle's seed and --no-ref (the
reference GGUFs are llama.cpp's input, not ours), with this directory first on PYTHONPATH so that
the generator's `import gguf` finds the project's own GGUF reader (gguf.py) instead of llama.cpp's
gguf-py. A directory whose every <format>/model.safetensors already has the oracle's sha256 is
reused. After writing, a sha256 that still differs means the generator did not reproduce the
oracle's bytes (another numpy, another generator): that is an error, since the oracle's token ids
belong to those exact weights.

Usage: oracle_models.py --out DIR [--shared SHARED_DIR]
"""
import argparse
import hashlib
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_SHARED = HERE.parents[2].parent / "shared"


def oracle_dir(shared):
    return pathlib.Path(shared) / "oracles" / "quantized_hf"


def load_oracle(shared):
    with open(oracle_dir(shared) / "oracle.json") as f:
        return json.load(f)


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def mismatched_checkpoints(out, oracle):
    """{format: why} for every checkpoint under out whose model.safetensors is not the oracle's."""
    mismatched = {}
    for fmt, expected in sorted(oracle["sha256"].items()):
        path = pathlib.Path(out) / fmt / "model.safetensors"
        if not path.exists():
            mismatched[fmt] = "missing"
            continue
        actual = sha256_of(path)
        if actual != expected:
            mismatched[fmt] = f"sha256 {actual}, the oracle's is {expected}"
    return mismatched


def ensure_models(out, shared=DEFAULT_SHARED):
    """Makes out/<format>/ hold the oracle's checkpoints; returns the oracle (oracle.json).
    Raises RuntimeError when the generator fails or does not reproduce the oracle's bytes."""
    oracle = load_oracle(shared)
    if not mismatched_checkpoints(out, oracle):
        return oracle
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    shared = pathlib.Path(shared)
    command = [sys.executable, str(oracle_dir(shared) / "make_quantized_hf_oracle.py"),
               "--out", str(out), "--seed", str(oracle["seed"]),
               "--tokenizer-dir", str(shared / "tokenizers" / "llama2"),
               "--vocab-gguf", str(shared / "vocab" / "ggml-vocab-llama-spm.gguf"),
               "--formats", ",".join(sorted(oracle["sha256"])), "--no-ref"]
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"the oracle's generator failed (exit {run.returncode}): "
                           f"{' '.join(command)}\n{run.stdout}{run.stderr}")
    mismatched = mismatched_checkpoints(out, oracle)
    if mismatched:
        lines = "\n".join(f"  {fmt}: {why}" for fmt, why in mismatched.items())
        raise RuntimeError("the generator did not write the oracle's checkpoints (its token ids "
                           "belong to those exact bytes; check numpy's version and the "
                           f"generator):\n{lines}")
    return oracle


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--shared", default=str(DEFAULT_SHARED))
    args = parser.parse_args()
    try:
        oracle = ensure_models(args.out, args.shared)
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{args.out}: the oracle's {len(oracle['sha256'])} checkpoints, sha256 checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
