"""The GGUF reader the oracle's generator imports in place of llama.cpp's gguf-py (gguf.py), on the
shared demo model and vocabulary."""
import os
import pathlib

import numpy as np
import pytest

import gguf
from oracle_models import DEFAULT_SHARED

SHARED = pathlib.Path(os.environ.get("VLLM_SHARED_DIR", DEFAULT_SHARED))
STORIES = SHARED / "models" / "stories260K.gguf"
LLAMA_VOCAB = SHARED / "vocab" / "ggml-vocab-llama-spm.gguf"


def string_of(field, index=0):
    return bytes(field.parts[field.data[index]]).decode("utf-8")


def test_metadata_scalars_strings_and_arrays():
    fields = gguf.GGUFReader(STORIES).fields
    assert string_of(fields["general.architecture"]) == "llama"
    assert int(fields["llama.embedding_length"].parts[-1][0]) == 64
    assert fields["llama.attention.layer_norm_rms_epsilon"].parts[-1].dtype == np.float32
    tokens = fields["tokenizer.ggml.tokens"]
    assert tokens.types == [gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.STRING]
    assert len(tokens.data) == 512
    assert [string_of(tokens, i) for i in range(3)] == ["<unk>", "<s>", "</s>"]
    assert len(fields["tokenizer.ggml.scores"].data) == 512


def test_tensor_infos_lay_out_the_data_section():
    reader = gguf.GGUFReader(STORIES)
    assert len(reader.tensors) == 48
    # All of this model's tensors are F32 (ggml type 0), stored in order, each right after the
    # previous one rounded up to the 32-byte alignment, the last one ending the file.
    offsets = [tensor.data_offset for tensor in reader.tensors]
    assert offsets == sorted(offsets)
    for tensor, following in zip(reader.tensors, reader.tensors[1:]):
        end = tensor.data_offset + 4 * tensor.n_elements
        assert following.data_offset == end + (-end % 32), tensor.name
    last = reader.tensors[-1]
    assert last.tensor_type == 0 and list(last.shape) == [64]
    assert last.data_offset + 4 * last.n_elements == os.path.getsize(STORIES)


def test_the_llama_vocabulary_the_generator_reads():
    fields = gguf.GGUFReader(LLAMA_VOCAB).fields
    tokens = fields["tokenizer.ggml.tokens"]
    assert len(tokens.data) == int(fields["llama.vocab_size"].parts[-1][0]) == 32000
    assert string_of(tokens, 29871) == "\u2581"
    assert len(fields["tokenizer.ggml.token_type"].data) == 32000


def test_truncated_and_foreign_files_are_errors(tmp_path):
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(LLAMA_VOCAB.read_bytes()[:100000])
    with pytest.raises(ValueError, match="truncated"):
        gguf.GGUFReader(truncated)
    foreign = tmp_path / "foreign.gguf"
    foreign.write_bytes(b"GGML" + bytes(60))
    with pytest.raises(ValueError, match="not a GGUF file"):
        gguf.GGUFReader(foreign)
