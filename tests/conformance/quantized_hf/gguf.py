"""A minimal GGUF reader for the quantized-HF oracle's generator (make_quantized_hf_oracle.py).

llama.cpp's gguf-py is neither in Debian nor on PyPI, and with --no-ref the generator needs from it
only the vocabulary of a GGUF file, read through GGUFReader(path).fields[key] with `.parts` and
`.data`. This module parses GGUF (versions 2 and 3, little-endian) itself and exposes that shape:

  field.parts: every piece of the key/value record as a numpy array, in file order (key length,
               key bytes, value type, then for an array its item type and count, then each item:
               a string as its length and its bytes, a number as a one-element array).
  field.data:  the indices in `parts` of the value's items (a string's bytes, a number's array).
  field.types: the value type, then the item type for an array.

Tensor infos are read too (name, shape in ggml order, ggml type, absolute data offset); their data
is not, as the generator does not need it. Writing GGUF (GGUFWriter) is not provided: the generator
needs it only for its reference GGUFs, which --no-ref skips.
"""
from collections import OrderedDict
from dataclasses import dataclass, field as dataclass_field
from enum import IntEnum

import numpy as np

GGUF_MAGIC = b"GGUF"
GGUF_DEFAULT_ALIGNMENT = 32


class GGUFValueType(IntEnum):
    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


# The little-endian numpy dtype of each scalar value type.
_SCALAR_DTYPES = {
    GGUFValueType.UINT8: np.dtype("<u1"), GGUFValueType.INT8: np.dtype("<i1"),
    GGUFValueType.UINT16: np.dtype("<u2"), GGUFValueType.INT16: np.dtype("<i2"),
    GGUFValueType.UINT32: np.dtype("<u4"), GGUFValueType.INT32: np.dtype("<i4"),
    GGUFValueType.FLOAT32: np.dtype("<f4"), GGUFValueType.BOOL: np.dtype("<u1"),
    GGUFValueType.UINT64: np.dtype("<u8"), GGUFValueType.INT64: np.dtype("<i8"),
    GGUFValueType.FLOAT64: np.dtype("<f8"),
}


@dataclass
class ReaderField:
    offset: int                 # of the record's first byte in the file
    name: str
    parts: list = dataclass_field(default_factory=list)
    data: list = dataclass_field(default_factory=list)
    types: list = dataclass_field(default_factory=list)


@dataclass
class ReaderTensor:
    name: str
    tensor_type: int            # ggml type id
    shape: np.ndarray           # ggml order: ne0 (the contiguous dimension) first
    n_elements: int
    data_offset: int            # absolute offset of the tensor's data in the file


class GGUFReader:
    def __init__(self, path):
        self.data = np.memmap(path, mode="r")
        if bytes(self.data[:4]) != GGUF_MAGIC:
            raise ValueError(f"{path}: not a GGUF file (magic {bytes(self.data[:4])!r})")
        offset = 4
        version, offset = self._scalar(offset, np.dtype("<u4"))
        if int(version[0]) not in (2, 3):
            raise ValueError(f"{path}: GGUF version {int(version[0])} is not supported "
                             "(2 and 3 are)")
        tensor_count, offset = self._scalar(offset, np.dtype("<u8"))
        kv_count, offset = self._scalar(offset, np.dtype("<u8"))
        self.fields = OrderedDict()
        for _ in range(int(kv_count[0])):
            field, offset = self._read_field(offset)
            if field.name in self.fields:
                raise ValueError(f"{path}: duplicate key {field.name}")
            self.fields[field.name] = field
        infos = []
        for _ in range(int(tensor_count[0])):
            info, offset = self._read_tensor_info(offset)
            infos.append(info)
        alignment = GGUF_DEFAULT_ALIGNMENT
        if "general.alignment" in self.fields:
            alignment = int(self.fields["general.alignment"].parts[-1][0])
            if alignment <= 0:
                raise ValueError(f"{path}: general.alignment {alignment} is not positive")
        data_start = offset + (-offset % alignment)
        self.tensors = [
            ReaderTensor(name, tensor_type, shape, int(np.prod(shape)), data_start + relative)
            for name, shape, tensor_type, relative in infos
        ]

    def _take(self, offset, count, dtype):
        end = offset + count * dtype.itemsize
        if end > len(self.data):
            raise ValueError(f"GGUF truncated: {count} x {dtype} at byte {offset} runs past "
                             "the end")
        return self.data[offset:end].view(dtype), end

    def _scalar(self, offset, dtype):
        return self._take(offset, 1, dtype)

    def _string(self, offset):
        """(length part, bytes part, next offset)."""
        length, offset = self._scalar(offset, np.dtype("<u8"))
        text, offset = self._take(offset, int(length[0]), np.dtype("<u1"))
        return length, text, offset

    def _value(self, offset, value_type, parts, data, types):
        """Appends one value's parts (and its items' indices in data); returns the next offset."""
        types.append(value_type)
        if value_type == GGUFValueType.STRING:
            length, text, offset = self._string(offset)
            parts.append(length)
            data.append(len(parts))
            parts.append(text)
            return offset
        if value_type == GGUFValueType.ARRAY:
            item_type, offset = self._scalar(offset, np.dtype("<u4"))
            count, offset = self._scalar(offset, np.dtype("<u8"))
            parts += [item_type, count]
            item_type = GGUFValueType(int(item_type[0]))
            for _ in range(int(count[0])):
                # An array's items share one type entry, as in gguf-py.
                offset = self._value(offset, item_type, parts, data, [])
            types.append(item_type)
            return offset
        dtype = _SCALAR_DTYPES.get(value_type)
        if dtype is None:
            raise ValueError(f"GGUF value type {int(value_type)} is unknown")
        value, offset = self._scalar(offset, dtype)
        data.append(len(parts))
        parts.append(value)
        return offset

    def _read_field(self, offset):
        start = offset
        key_length, key, offset = self._string(offset)
        value_type, offset = self._scalar(offset, np.dtype("<u4"))
        field = ReaderField(start, bytes(key).decode("utf-8"), [key_length, key, value_type])
        try:
            kind = GGUFValueType(int(value_type[0]))
        except ValueError:
            raise ValueError(
                f"GGUF key {field.name}: value type {int(value_type[0])} is unknown") from None
        offset = self._value(offset, kind, field.parts, field.data, field.types)
        return field, offset

    def _read_tensor_info(self, offset):
        _, name, offset = self._string(offset)
        n_dims, offset = self._scalar(offset, np.dtype("<u4"))
        shape, offset = self._take(offset, int(n_dims[0]), np.dtype("<u8"))
        tensor_type, offset = self._scalar(offset, np.dtype("<u4"))
        relative, offset = self._scalar(offset, np.dtype("<u8"))
        info = (bytes(name).decode("utf-8"), shape.copy(), int(tensor_type[0]), int(relative[0]))
        return info, offset
