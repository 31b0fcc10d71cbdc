#!/usr/bin/env python3
"""Writes random PEFT LoRA adapters (adapter_config.json + adapter_model.safetensors, f32) of a
base's shapes, for the multi-LoRA serving benchmark: OUT/a0, OUT/a1, ... one per --count, each on
q, k, v, o, gate, up and down of every layer; with --gguf also the same adapters as llama.cpp's
GGUF LoRA files OUT/a0.gguf, ... (convert_lora_to_gguf.py's layout for a "llama" base: lora_b of
q and k in the base's RoPE row order). Standard library only.

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


# PEFT module -> llama.cpp's weight name in a layer.
GGUF_NAMES = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
              "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
              "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def permute_rows_for_rope(blob, row_bytes, num_heads):
    """q / k rows from Hugging Face's order to llama.cpp's: within each head, row 2i + j holds
    HF row i + j * head_dim / 2 (the converter's permute)."""
    rows = [blob[i:i + row_bytes] for i in range(0, len(blob), row_bytes)]
    head_dim = len(rows) // num_heads
    half = head_dim // 2
    out = []
    for head in range(num_heads):
        base = head * head_dim
        for i in range(half):
            out += [rows[base + i], rows[base + i + half]]
    return b"".join(out)


def gguf_string(text):
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path, tensors, alpha):
    """GGUF v3 with general.type "adapter": tensors is [(name, ne, f32 bytes)], ne fastest first."""
    kvs = [("general.architecture", 8, gguf_string("llama")),
           ("general.type", 8, gguf_string("adapter")),
           ("adapter.type", 8, gguf_string("lora")),
           ("adapter.lora.alpha", 6, struct.pack("<f", alpha))]
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, kind, value in kvs:
        head += gguf_string(key) + struct.pack("<I", kind) + value
    offset = 0
    for name, ne, blob in tensors:
        head += gguf_string(name) + struct.pack("<I", len(ne))
        head += b"".join(struct.pack("<Q", n) for n in ne) + struct.pack("<IQ", 0, offset)  # F32
        offset += len(blob) + (-len(blob) % 32)
    with open(path, "wb") as f:
        f.write(head + b"\0" * (-len(head) % 32))
        for _, _, blob in tensors:
            f.write(blob + b"\0" * (-len(blob) % 32))


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

    header, blobs, offset, gguf_tensors = {}, [], 0, []
    heads = {"self_attn.q_proj": args.heads, "self_attn.k_proj": args.kv_heads}
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
                if args.gguf:
                    if kind == "lora_B" and module in heads:
                        blob = permute_rows_for_rope(blob, 4 * args.rank, heads[module])
                    gguf_name = f"blk.{layer}.{GGUF_NAMES[module]}.weight.{kind.lower()}"
                    gguf_tensors.append((gguf_name, shape[::-1], blob))
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
    if args.gguf:
        write_gguf(path + ".gguf", gguf_tensors, 2.0 * args.rank)


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
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--gguf", action="store_true", help="also write OUT/aN.gguf")
    args = parser.parse_args()
    for n in range(args.count):
        write_adapter(os.path.join(args.out, f"a{n}"), args.seed + n, args)


if __name__ == "__main__":
    main()
