"""vLLM's LoRARequest: the LoRA adapter a request runs with (a PEFT directory or a llama.cpp GGUF
LoRA file), for LLM(enable_lora=True).generate(..., lora_request=...), LLMEngine.add_request and
AsyncLLM.generate. lora_int_id identifies the adapter in the engine's cache: give each adapter
its own id, 1 or more."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .. import _core


@dataclass(eq=False)
class LoRARequest:
    lora_name: str
    lora_int_id: int
    lora_path: str = ""
    lora_local_path: Optional[str] = field(default=None, repr=False)  # lora_path's older name
    long_lora_max_len: Optional[int] = None
    base_model_name: Optional[str] = None
    tensorizer_config_dict: Optional[dict] = None

    def __post_init__(self) -> None:
        if self.lora_int_id < 1:
            raise ValueError(f"id must be > 0, got {self.lora_int_id}")
        if self.lora_local_path:
            self.lora_path = self.lora_local_path
        if not self.lora_path:
            raise ValueError("lora_path cannot be empty")
        if self.long_lora_max_len is not None:
            raise NotImplementedError("long_lora_max_len is not supported by vllm-cpp")
        if self.tensorizer_config_dict is not None:
            raise NotImplementedError("tensorizer_config_dict is not supported by vllm-cpp: "
                                      "adapters load from PEFT directories or GGUF files")

    @property
    def adapter_id(self) -> int:
        return self.lora_int_id

    @property
    def name(self) -> str:
        return self.lora_name

    @property
    def path(self) -> str:
        return self.lora_path

    @property
    def local_path(self) -> str:
        return self.lora_path

    # As vLLM: two requests are the same adapter when their names are.
    def __eq__(self, other: Any) -> bool:
        return isinstance(other, LoRARequest) and self.lora_name == other.lora_name

    def __hash__(self) -> int:
        return hash(self.lora_name)

    def _to_core(self) -> _core.LoraRequest:
        core = _core.LoraRequest()
        core.lora_name = self.lora_name
        core.lora_int_id = self.lora_int_id
        core.lora_path = str(self.lora_path)
        core.base_model_name = self.base_model_name or ""
        return core


def lora_requests_per_prompt(lora_request: Any, num_prompts: int) -> list[Optional[LoRARequest]]:
    """generate()'s lora_request: None, one for every prompt, or a list of one per prompt (None
    items run the base model)."""
    if lora_request is None or isinstance(lora_request, LoRARequest):
        return [lora_request] * num_prompts
    requests = list(lora_request)
    if len(requests) != num_prompts:
        raise ValueError("The lengths of prompts and lora_request must be the same.")
    for request in requests:
        if request is not None and not isinstance(request, LoRARequest):
            raise TypeError(f"lora_request must be a LoRARequest, not {type(request).__name__}")
    return requests


def core_lora_request(lora_request: Optional[LoRARequest]) -> Optional[_core.LoraRequest]:
    """The engine form of one request's adapter (None: the base model)."""
    if lora_request is None:
        return None
    if not isinstance(lora_request, LoRARequest):
        raise TypeError(f"lora_request must be a LoRARequest, not {type(lora_request).__name__}")
    return lora_request._to_core()


def core_lora_requests(lora_requests: list[Optional[LoRARequest]]
                       ) -> list[Optional[_core.LoraRequest]]:
    """The engine form of each prompt's adapter, for the calls that take one per prompt."""
    return [core_lora_request(request) for request in lora_requests]


def beam_search_lora_requests(lora_request: Any, num_prompts: int
                              ) -> list[Optional[_core.LoraRequest]]:
    """beam_search()'s lora_request, as vLLM checks it: None, one for every prompt, or a list of
    one per prompt; the engine form of each prompt's adapter."""
    if lora_request is None or isinstance(lora_request, LoRARequest):
        return core_lora_requests([lora_request] * num_prompts)
    if not isinstance(lora_request, (list, tuple)):
        raise TypeError(f"Invalid lora_request type {type(lora_request)}")
    if len(lora_request) != num_prompts:
        raise ValueError("Lora request list should be the same length as the prompts")
    return core_lora_requests(list(lora_request))
