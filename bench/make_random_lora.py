#!/usr/bin/env python3
"""Writes random PEFT LoRA adapters (adapter_config.json + adapter_model.safetensors, f32) of a
base's shapes, for the multi-LoRA serving benchmark: OUT/a0, OUT/a1, ... one per --count, each on
q, k, v, o, gate, up and down of every layer. Standard library only.

    bench/make_random_lora.py --out /tmp/adapters --count 4 --rank 16   # TinyLlama-1.1B's shapes
"""
import argparse
import array
import json
import os
import random
import struct

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def target_shapes(hidden, q_size, kv_size, ffn):
    """(module path, in_features, out_features) of each target in one layer."""
    return (("self_attn.q_proj", hidden, q_size), ("self_attn.k_proj", hidden, kv_size),
            ("self_attn.v_proj", hidden, kv_size), ("self_attn.o_proj", q_size, hidden),
            ("mlp.gate_proj", hidden, ffn), ("mlp.up_proj", hidden, ffn),
            ("mlp.down_proj", ffn, hidden))


def write_adapter(path, seed, args):
    rng = random.Random(seed)
    # Values repeat from a pool of 64 Ki normal draws: the benchmark reads bytes, it needs no
    # fresh randomness in every one.
    pool = array.array("f", (rng.gauss(0.0, 0.02) for _ in range(1 << 16)))

    def values(count):
        out = array.array("f")
        while len(out) < count:
            out.extend(pool[:min(len(pool), count - len(out))])
        return out.tobytes()

    header, blobs, offset = {}, [], 0
    for layer in range(args.layers):
        for module, in_features, out_features in target_shapes(args.hidden, args.q_size,
                                                               args.kv_size, args.ffn):
            for kind, shape in (("lora_A", [args.rank, in_features]),
                                ("lora_B", [out_features, args.rank])):
                blob = values(shape[0] * shape[1])
                name = f"base_model.model.model.layers.{layer}.{module}.{kind}.weight"
                header[name] = {"dtype": "F32", "shape": shape,
                                "data_offsets": [offset, offset + len(blob)]}
                blobs.append(blob)
                offset += len(blob)
    os.makedirs(path, exist_ok=True)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(path, "adapter_model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    with open(os.path.join(path, "adapter_config.json"), "w") as f:
        json.dump({"peft_type": "LORA", "r": args.rank, "lora_alpha": 2 * args.rank,
                   "target_modules": list(TARGETS)}, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, default=4)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layers", type=int, default=22)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--q-size", type=int, default=2048)
    parser.add_argument("--kv-size", type=int, default=256)
    parser.add_argument("--ffn", type=int, default=5632)
    args = parser.parse_args()
    for n in range(args.count):
        write_adapter(os.path.join(args.out, f"a{n}"), args.seed + n, args)


if __name__ == "__main__":
    main()
