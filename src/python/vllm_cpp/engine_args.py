"""vLLM's EngineArgs (and AsyncEngineArgs): the options LLM(...) and the engines take.

The fields the C++ engine has map onto vllm::EngineArgs (include/vllm/engine_args.h). vLLM fields
that have no meaning here accept their default; any other value raises NotImplementedError naming
the field. An unknown name raises TypeError, as for any Python call.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from typing import Any, Optional

from . import _core

# vLLM fields vllm-cpp does not implement: the values each accepts, and what to do instead.
_UNSUPPORTED = {
    "tensor_parallel_size": ((1,), "tensor parallelism runs as Open MPI ranks that the vllm-cpp "
                             "command starts (`vllm-cpp serve MODEL -tp N`, or generate / chat / "
                             "bench); LLM() runs in this one Python process"),
    "pipeline_parallel_size": ((1,), "pipeline parallelism runs as Open MPI ranks that the "
                               "vllm-cpp command starts (`vllm-cpp serve MODEL -pp N`, or "
                               "generate / chat / bench); LLM() runs in this one Python process"),
    "data_parallel_size": ((1,), "data parallelism is not implemented yet"),
    "swap_space": ((4,), "preempted requests are recomputed, never swapped"),
    "cpu_offload_gb": ((0,), "weights stay in memory"),
    "enable_chunked_prefill": ((None, True), "prefill is always chunked"),
    "quantization_param_path": ((None,), "not implemented"),
    "compilation_config": ((None,), "there is nothing to compile"),
    "mm_processor_kwargs": ((None,), "multimodal models are not supported"),
    "logits_processors": ((None,), "custom logits processors are not supported"),
}


@dataclass
class EngineArgs:
    """Engine options with vLLM's names and defaults (None: the engine's default)."""

    model: str = ""
    tokenizer: Optional[str] = None
    tokenizer_mode: str = "auto"
    skip_tokenizer_init: bool = False
    enable_prompt_embeds: bool = False  # generate() takes {"prompt_embeds": ...} prompts
    trust_remote_code: bool = False  # accepted: no code from the model directory ever runs
    dtype: str = "auto"
    quantization: Optional[str] = None
    seed: Optional[int] = 0
    max_model_len: Optional[int] = None
    max_num_seqs: Optional[int] = None
    max_num_batched_tokens: Optional[int] = None
    enable_prefix_caching: Optional[bool] = True
    block_size: Optional[int] = 16
    kv_cache_memory_bytes: Optional[int] = None
    kv_cache_dtype: str = "auto"
    # float32 / bfloat16 pick the KV cache dtype attention reads; float16 is ignored (a warning)
    override_attention_dtype: Optional[str] = None
    scheduling_policy: str = "fcfs"
    speculative_config: Optional[dict[str, Any]] = None
    disable_hybrid_kv_cache_manager: bool = False
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    # The share of the memory available before the model loads, less its weights, that the KV
    # cache takes unless kv_cache_memory_bytes or VLLM_CPU_KVCACHE_SPACE (GiB) is given. None: the
    # engine's 2 GiB (vLLM's 0.9 would take most of the RAM).
    gpu_memory_utilization: Optional[float] = None
    swap_space: float = 4
    cpu_offload_gb: float = 0
    enforce_eager: bool = False  # accepted: the CPU engine has no graphs to capture
    disable_log_stats: bool = True  # accepted: the offline engine logs no stats
    enable_chunked_prefill: Optional[bool] = None
    max_logprobs: int = 20  # per position, for logprobs and prompt_logprobs (-1: no limit)
    # LoRA adapters (lora_request=LoRARequest(...)): at most max_loras distinct ones in a step,
    # each of rank <= max_lora_rank, max_cpu_loras kept loaded (None: max_loras). lora_dtype is
    # accepted (auto, float16, bfloat16, float32): the adapter product runs in float32 here.
    enable_lora: bool = False
    max_loras: int = 1
    max_lora_rank: int = 16
    max_cpu_loras: Optional[int] = None
    lora_dtype: str = "auto"
    # Model ids (org/name) are looked up in the Hugging Face cache and downloaded when absent.
    download_dir: Optional[str] = None
    revision: Optional[str] = None
    tokenizer_revision: Optional[str] = None
    hf_config_path: Optional[str] = None  # a directory or id whose config.json to use
    hf_token: Optional[str] = None
    hf_overrides: Optional[dict[str, Any]] = None
    rope_scaling: Optional[dict[str, Any]] = None  # vLLM's shorthand for hf_overrides' key
    rope_theta: Optional[float] = None
    quantization_param_path: Optional[str] = None
    compilation_config: Optional[Any] = None
    mm_processor_kwargs: Optional[dict[str, Any]] = None
    logits_processors: Optional[list[Any]] = None
    runner: str = "auto"  # auto | generate | pooling
    convert: str = "auto"  # auto | embed | classify (a pooling runner's task family)
    task: Optional[str] = None  # vLLM 0.10's deprecated runner / convert (replaces both)
    pooler_config: Optional[dict[str, Any]] = None  # pooling_type, normalize, dimensions, ...
    override_pooler_config: Optional[dict[str, Any]] = None  # pooler_config's older name
    generation_config: str = "auto"  # auto | vllm | a directory holding generation_config.json
    override_generation_config: Optional[dict[str, Any]] = None  # replaces its sampling defaults
    logprobs_mode: str = "raw_logprobs"  # raw_logprobs|raw_logits|processed_logprobs|processed_logits
    disable_sliding_window: bool = False  # caps max_model_len to the model's sliding window
    num_threads: int = 0  # vllm-cpp's own: worker threads (0: one per CPU; at most a few per CPU)

    def _to_core(self) -> _core.EngineArgs:
        for name, (accepted, instead) in _UNSUPPORTED.items():
            value = getattr(self, name)
            if value not in accepted:
                raise NotImplementedError(
                    f"{name}={value!r} is not supported by vllm-cpp: {instead}")
        if not self.model:
            raise ValueError("model must be given (a GGUF file, a Hugging Face model directory "
                             "or a model id)")
        core = _core.EngineArgs()
        core.model = os.fspath(self.model)
        # Each None keeps the C++ default: the environment's cache, main, HF_TOKEN, the model's
        # tokenizer. hf_token=True (vLLM's "the stored token") is that default too.
        for name in ("download_dir", "revision", "tokenizer", "tokenizer_revision",
                     "hf_config_path"):
            value = getattr(self, name)
            if value is not None:
                setattr(core, name, os.fspath(value))
        if isinstance(self.hf_token, str):
            core.hf_token = self.hf_token
        core.tokenizer_mode = self.tokenizer_mode
        core.skip_tokenizer_init = self.skip_tokenizer_init
        core.enable_prompt_embeds = self.enable_prompt_embeds
        core.dtype = self.dtype
        core.quantization = self.quantization or ""
        core.kv_cache_dtype = self.kv_cache_dtype
        core.override_attention_dtype = self.override_attention_dtype or ""
        core.scheduling_policy = self.scheduling_policy
        core.disable_hybrid_kv_cache_manager = self.disable_hybrid_kv_cache_manager
        core.num_threads = self.num_threads
        core.max_logprobs = self.max_logprobs
        core.runner = self.runner
        core.convert = self.convert
        if self.task is not None:
            _core.apply_deprecated_task(core, self.task)
        pooler_config = self.pooler_config or self.override_pooler_config
        if pooler_config is not None:
            core.pooler_config = json.dumps(pooler_config)
        core.generation_config = os.fspath(self.generation_config)
        if self.override_generation_config is not None:
            core.override_generation_config = json.dumps(self.override_generation_config)
        core.logprobs_mode = self.logprobs_mode
        core.disable_sliding_window = self.disable_sliding_window
        core.enable_lora = self.enable_lora
        core.max_loras = self.max_loras
        core.max_lora_rank = self.max_lora_rank
        core.max_cpu_loras = self.max_cpu_loras
        core.lora_dtype = str(self.lora_dtype).removeprefix("torch.")
        if self.hf_overrides is not None:
            core.hf_overrides = json.dumps(self.hf_overrides)
        if self.rope_scaling:
            core.rope_scaling = json.dumps(self.rope_scaling)
        if self.rope_theta is not None:
            core.rope_theta = float(self.rope_theta)
        # None keeps the C++ default.
        for name in ("max_model_len", "max_num_seqs", "max_num_batched_tokens",
                     "enable_prefix_caching", "block_size", "kv_cache_memory_bytes",
                     "gpu_memory_utilization"):
            value = getattr(self, name)
            if value is not None:
                setattr(core, name, value)
        if self.speculative_config is not None:
            core.speculative_config = _speculative_config(self.speculative_config)
        return core

    def _request_seeds(self) -> "RequestSeeds":
        return RequestSeeds(self.seed)


class RequestSeeds:
    """vLLM's global seed: one seed per request that has none of its own, drawn in order from a
    generator seeded with EngineArgs.seed (None: such requests stay unseeded)."""

    def __init__(self, seed: Optional[int]) -> None:
        self._generator = None if seed is None else random.Random(seed)

    def next(self) -> Optional[int]:
        return None if self._generator is None else self._generator.getrandbits(63)


# vLLM's name for the same options given to the asyncio engine.
AsyncEngineArgs = EngineArgs


def _speculative_config(config: dict[str, Any]) -> _core.SpeculativeConfig:
    known = {"method", "model", "num_speculative_tokens", "prompt_lookup_max", "prompt_lookup_min"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise NotImplementedError(f"speculative_config keys not supported by vllm-cpp: {unknown}")
    core = _core.SpeculativeConfig()
    for name, value in config.items():
        setattr(core, name, value)
    return core

