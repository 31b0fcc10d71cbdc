"""LLM(..., override_attention_dtype=...) as `vllm serve --override-attention-dtype`: float32 /
bfloat16 pick the KV cache dtype attention reads, float16 is ignored, and a conflicting explicit
kv_cache_dtype or an unknown dtype is refused with the serve flag's words."""

import pytest

KV_CACHE_BYTES = 4 << 20
# A block of the demo model holds 16 tokens x 5 layers x 64 of K and V.
FLOAT32_BLOCK_BYTES = 20480


def num_kv_blocks(llm) -> int:
    return llm.llm_engine._core.stats()["num_free_blocks"]


@pytest.mark.parametrize("override, block_bytes", [
    ("bfloat16", FLOAT32_BLOCK_BYTES // 2),
    ("float32", FLOAT32_BLOCK_BYTES),
    ("float16", FLOAT32_BLOCK_BYTES),  # ignored: the F32 model's float32 cache
])
def test_override_picks_the_kv_cache_dtype(model, override, block_bytes):
    from vllm_cpp import LLM, SamplingParams

    llm = LLM(model=model, kv_cache_memory_bytes=KV_CACHE_BYTES,
              override_attention_dtype=override)
    assert num_kv_blocks(llm) == KV_CACHE_BYTES // block_bytes
    output = llm.generate("Once upon a time", SamplingParams(max_tokens=4), use_tqdm=False)[0]
    assert len(output.outputs[0].token_ids) == 4


def test_conflicts_and_unknown_dtypes_are_refused(model):
    from vllm_cpp import LLM

    with pytest.raises(RuntimeError, match="--override-attention-dtype float32 conflicts with "
                                           "--kv-cache-dtype int8"):
        LLM(model=model, override_attention_dtype="float32", kv_cache_dtype="int8")
    with pytest.raises(RuntimeError, match=r"unsupported --override-attention-dtype fp8 "
                                           r"\(supported: float32, bfloat16, float16\)"):
        LLM(model=model, override_attention_dtype="fp8")
