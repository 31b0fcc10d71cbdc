"""The KV cache's size as vLLM's CPU backend takes it, through LLM(...): kv_cache_memory_bytes,
else VLLM_CPU_KVCACHE_SPACE (GiB), else gpu_memory_utilization's share of the RAM available at
start less the weights; out-of-range values refused in vLLM's words."""

import pytest

# A block of the demo model holds 16 tokens x 5 layers of float32 K and V.
BYTES_PER_BLOCK = 20480


def num_kv_blocks(llm) -> int:
    return llm.llm_engine._core.stats()["num_free_blocks"]


def test_vllm_cpu_kvcache_space_sizes_the_cache(model, monkeypatch):
    from vllm_cpp import LLM, SamplingParams

    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "0.01")
    llm = LLM(model=model, gpu_memory_utilization=0.5)
    assert num_kv_blocks(llm) == int(0.01 * (1 << 30)) // BYTES_PER_BLOCK
    outputs = llm.generate("Once upon a time", SamplingParams(max_tokens=4), use_tqdm=False)
    assert outputs[0].outputs[0].token_ids
    # Explicit bytes win over the environment.
    explicit = LLM(model=model, kv_cache_memory_bytes=4 << 20)
    assert num_kv_blocks(explicit) == (4 << 20) // BYTES_PER_BLOCK


def test_gpu_memory_utilization_is_a_share_of_the_available_memory(model, monkeypatch):
    from vllm_cpp import LLM

    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    with open("/proc/meminfo") as meminfo:
        available = next(int(line.split()[1]) * 1024 for line in meminfo
                         if line.startswith("MemAvailable:"))
    # About 16 MiB of it (a cgroup limit or other processes may make it less).
    llm = LLM(model=model, gpu_memory_utilization=(16 << 20) / available)
    assert 0 < num_kv_blocks(llm) < 2 * (16 << 20) // BYTES_PER_BLOCK


@pytest.mark.parametrize("share, words", [
    (1.5, "Input should be less than or equal to 1, got 1.5"),
    (0, "Input should be greater than 0, got 0"),
    (-0.25, "Input should be greater than 0, got -0.25"),
])
def test_out_of_range_share_is_refused(model, share, words):
    from vllm_cpp import LLM

    with pytest.raises(RuntimeError, match=f"gpu_memory_utilization .*{words}"):
        LLM(model=model, gpu_memory_utilization=share)


def test_bad_kvcache_space_is_refused(model, monkeypatch):
    from vllm_cpp import LLM

    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "lots")
    with pytest.raises(RuntimeError,
                       match="VLLM_CPU_KVCACHE_SPACE must be a number of GiB, got 'lots'"):
        LLM(model=model)
