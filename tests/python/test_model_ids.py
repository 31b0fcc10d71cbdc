"""LLM(model="org/name", download_dir=..., revision=..., tokenizer=...) resolves the id in a
Hugging Face cache laid out as huggingface_hub leaves it (built here, offline), through the same
C++ loader as `vllm-cpp serve org/name`."""

import pytest

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def cache_with_gguf_repo(cache, model, revision="main"):
    """models--org--stories-GGUF: refs/<revision>, a blob (a link to the demo model) and the
    snapshot's relative link to it."""
    repo = cache / "models--org--stories-GGUF"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / "etag0").symlink_to(model)
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "stories260K-Q8_0.gguf").symlink_to("../../blobs/etag0")
    (repo / "refs").mkdir()
    (repo / "refs" / revision).write_text(COMMIT)


def test_model_id_resolves_from_the_cache(model, tmp_path, monkeypatch):
    from vllm_cpp import LLM, SamplingParams

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache_with_gguf_repo(tmp_path, model, revision="v1")
    llm = LLM(model="org/stories-GGUF:q8_0", download_dir=str(tmp_path), revision="v1",
              tokenizer=model, kv_cache_memory_bytes=1 << 22)
    [output] = llm.generate("Once upon a time", SamplingParams(max_tokens=12, temperature=0),
                            use_tqdm=False)
    assert output.outputs[0].text.startswith(", there was a little girl named Lily")


def test_model_id_errors_are_clear(model, tmp_path, monkeypatch):
    from vllm_cpp import LLM

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RuntimeError, match="org/absent is not in the Hugging Face cache.*"
                       "HF_HUB_OFFLINE is set"):
        LLM(model="org/absent", download_dir=str(tmp_path))
    cache_with_gguf_repo(tmp_path, model)
    with pytest.raises(RuntimeError, match="refs/v2 is absent"):
        LLM(model="org/stories-GGUF", download_dir=str(tmp_path), revision="v2")
