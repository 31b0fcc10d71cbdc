#!/usr/bin/env python3
"""A numpy reading of the quantized checkpoints of make_quantized_hf_oracle.py: dequantizes one
into an F32 Hugging Face checkpoint (its config without quantization_config, the same tokenizer).

It is the reference beside the C++ loaders: the oracle's token ids are llama.cpp's on exactly these
dequantized weights, so when a format's checkpoint misses the oracle but its dequantized F32 copy
matches, the loader of that format is at fault, not the engine or the oracle. Each format is read
from the files as the generator's docstring lays it out:

  gptq (v1)       qweight int32 [in/(32/bits), out], value j of a word at bits*j along in;
                  qzeros int32 [groups, out/(32/bits)] holding zero - 1; scales f16 [groups, out];
                  g_idx int32 [in]. W[o, i] = scales[g, o] * (q[i, o] - zero[g, o]), g = g_idx[i].
  awq (GEMM)      qweight int32 [in, out/8], nibble j of a word holding column 8w + AWQ_ORDER[j];
                  qzeros int32 [groups, out/8] likewise; scales f16 [groups, out].
                  W[o, i] = (q[i, o] - zero[g, o]) * scales[g, o], g = i / group.
  fp8 (block)     weight F8_E4M3 [out, in]; weight_scale_inv f32 [ceil(out/b0), ceil(in/b1)].
  compressed-tensors
    float-/int-quantized: weight F8_E4M3 or I8 [out, in], weight_scale [out, 1];
    pack-quantized:       weight_packed int32 [out, in/8] (value + 8, value j at bits 4j along in),
                          weight_scale [out, in/group], weight_shape [2].

Usage: dequantize.py SRC_CHECKPOINT_DIR DST_DIR
"""
import json
import os
import pathlib
import shutil
import struct
import sys

import numpy as np

# AWQ's GEMM packing: nibble j of a word holds the column at offset AWQ_ORDER[j] in its 8 columns.
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]
_NUMPY_DTYPES = {"F32": "<f4", "F16": "<f2", "I32": "<i4", "I64": "<i8", "I8": "i1",
                 "U8": "u1", "F8_E4M3": "u1", "BF16": "<u2"}


def e4m3_values():
    """The float value of each e4m3fn code (NaN for 0x7f and 0xff)."""
    codes = np.arange(256)
    sign = np.where(codes >> 7, -1.0, 1.0)
    exponent, mantissa = (codes >> 3) & 15, codes & 7
    magnitude = np.where(exponent == 0, mantissa / 8 * 2.0 ** -6,
                         (1 + mantissa / 8) * 2.0 ** (exponent - 7))
    values = sign * magnitude
    values[[0x7F, 0xFF]] = np.nan
    return values


E4M3 = e4m3_values()


def read_safetensors(path):
    """{name: (dtype name, numpy array)}; BF16 comes back as float32, F8_E4M3 as its codes."""
    with open(path, "rb") as f:
        (header_size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_size))
        data = f.read()
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[begin:end], _NUMPY_DTYPES[entry["dtype"]])
        array = array.reshape(entry["shape"])
        if entry["dtype"] == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = (entry["dtype"], array)
    return tensors


def write_safetensors(path, tensors):
    """Writes {name: float32 array} as F32."""
    header, offset = {}, 0
    for name, array in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)) + encoded)
        for array in tensors.values():
            f.write(np.ascontiguousarray(array, np.float32).tobytes())


def unpack(words, bits, axis):
    """The unsigned values packed in int32 words along axis, value j of a word at bits*j."""
    per_word = 32 // bits
    words = np.moveaxis(words.view(np.uint32), axis, -1)
    shifts = np.arange(per_word, dtype=np.uint32) * bits
    values = (words[..., None] >> shifts) & np.uint32((1 << bits) - 1)
    values = values.reshape(*words.shape[:-1], words.shape[-1] * per_word)
    return np.moveaxis(values.astype(np.int64), -1, axis)


def dequantize_gptq(parts, bits):
    q = unpack(parts["qweight"], bits, 0)                       # [in, out]
    zeros = unpack(parts["qzeros"], bits, 1) + 1                # [groups, out]
    scales = parts["scales"].astype(np.float32)                 # [groups, out]
    g_idx = parts["g_idx"].astype(np.int64)                     # [in]
    return (scales[g_idx] * (q - zeros[g_idx])).T.astype(np.float32)


def dequantize_awq(parts, group):
    def columns_in_order(words):                                # [rows, out/8] -> [rows, out]
        nibbles = unpack(words, 4, 1)
        nibbles = nibbles.reshape(*nibbles.shape[:-1], -1, 8)
        ordered = np.empty_like(nibbles)
        ordered[..., AWQ_ORDER] = nibbles
        return ordered.reshape(*words.shape[:-1], -1)

    q = columns_in_order(parts["qweight"])                      # [in, out]
    zeros = columns_in_order(parts["qzeros"])                   # [groups, out]
    scales = parts["scales"].astype(np.float32)                 # [groups, out]
    group_of_row = np.arange(q.shape[0]) // group
    return ((q - zeros[group_of_row]) * scales[group_of_row]).T.astype(np.float32)


def dequantize_fp8_block(parts, block):
    codes, scale_inv = parts["weight"], parts["weight_scale_inv"]  # [out, in], [out/b0, in/b1]
    rows, cols = np.arange(codes.shape[0]) // block[0], np.arange(codes.shape[1]) // block[1]
    return (E4M3[codes] * scale_inv[rows][:, cols]).astype(np.float32)


def dequantize_compressed_tensors(parts, form):
    if form == "pack-quantized":
        out_dim, in_dim = (int(v) for v in parts["weight_shape"])
        q = unpack(parts["weight_packed"], 4, 1)[:, :in_dim] - 8     # [out, in]
        scales = parts["weight_scale"]                               # [out, in/group]
        group = in_dim // scales.shape[1]
        return (q * scales[:, np.arange(in_dim) // group]).astype(np.float32)
    values = E4M3[parts["weight"]] if form == "float-quantized" else parts["weight"]
    return (values * parts["weight_scale"]).astype(np.float32)      # weight_scale [out, 1]


def dequantize_linear(config, parts):
    method = config["quant_method"]
    if method == "gptq":
        return dequantize_gptq(parts, config["bits"])
    if method == "awq":
        return dequantize_awq(parts, config["group_size"])
    if method == "fp8":
        return dequantize_fp8_block(parts, config["weight_block_size"])
    if method == "compressed-tensors":
        return dequantize_compressed_tensors(parts, config["format"])
    raise ValueError(f"quant_method {method} is not one of the oracle's")


# The stored suffixes of a quantized linear layer, the first one of each method naming the layer.
_LAYER_SUFFIXES = ["qweight", "qzeros", "scales", "g_idx", "weight_scale_inv", "weight_scale",
                   "weight_packed", "weight_shape"]


def dequantize_checkpoint(src, dst):
    src, dst = pathlib.Path(src), pathlib.Path(dst)
    config = json.loads((src / "config.json").read_text())
    quantization = config.pop("quantization_config")
    stored = read_safetensors(src / "model.safetensors")
    layers = {}                                                  # module -> {suffix: array}
    for name, (_, array) in stored.items():
        module, _, suffix = name.rpartition(".")
        if suffix in _LAYER_SUFFIXES:
            layers.setdefault(module, {})[suffix] = array
    weights = {}
    for name, (_, array) in stored.items():
        module, _, suffix = name.rpartition(".")
        if module in layers and suffix == "weight":
            layers[module]["weight"] = array
        elif module not in layers:
            weights[name] = array.astype(np.float32)
    for module, parts in layers.items():
        weights[module + ".weight"] = dequantize_linear(quantization, parts)
    os.makedirs(dst, exist_ok=True)
    write_safetensors(dst / "model.safetensors", dict(sorted(weights.items())))
    (dst / "config.json").write_text(json.dumps(dict(config, torch_dtype="float32"), indent=1))
    for path in src.iterdir():
        if path.name.startswith("tokenizer") or path.name == "generation_config.json":
            shutil.copyfile(path, dst / path.name)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: " + __doc__.rsplit("Usage: ", 1)[1].strip())
    dequantize_checkpoint(sys.argv[1], sys.argv[2])
