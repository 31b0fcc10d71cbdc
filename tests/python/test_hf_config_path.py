"""LLM(hf_config_path=...): another directory's config.json describes the model directory's
weights, as vLLM's hf_config_path; a GGUF model refuses it."""

import json
import os
import shutil
import subprocess

import pytest


def test_hf_config_path_replaces_the_model_directorys_config(tmp_path, model):
    from conftest import SHARED
    from vllm_cpp import LLM

    binary = os.environ.get("VLLM_CPP_BINARY")
    if not binary:
        pytest.skip("VLLM_CPP_BINARY is not set (CTest sets it)")
    checkpoint = tmp_path / "model"
    subprocess.run([binary, "make-random-model", "--shape", "llama-tiny", "--vocab",
                    str(SHARED / "vocab" / "ggml-vocab-llama-spm.gguf"), "--out", str(checkpoint),
                    "--hf-dir", str(SHARED / "tokenizers" / "llama2")],
                   check=True, capture_output=True)
    right = tmp_path / "right"
    right.mkdir()
    shutil.copy(checkpoint / "config.json", right / "config.json")
    right_len = json.loads((right / "config.json").read_text())["max_position_embeddings"]
    config = json.loads((checkpoint / "config.json").read_text())
    config["max_position_embeddings"] = 64
    (checkpoint / "config.json").write_text(json.dumps(config))

    assert LLM(model=str(checkpoint), kv_cache_memory_bytes=1 << 22).llm_engine.max_model_len == 64
    llm = LLM(model=str(checkpoint), hf_config_path=str(right), kv_cache_memory_bytes=1 << 22)
    assert llm.llm_engine.max_model_len == right_len
    with pytest.raises(RuntimeError, match="--hf-config-path .* is for a Hugging Face model "
                       "directory; a GGUF model takes its config from its own metadata"):
        LLM(model=model, hf_config_path=str(right))
