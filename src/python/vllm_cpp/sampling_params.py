"""vLLM's SamplingParams: how one request is sampled and when it stops.

Every field and default of vLLM's (vllm/sampling_params.py). Fields the C++ engine does not
implement accept vLLM's default and raise NotImplementedError for any other value. Validation
runs in the C++ struct (include/vllm/sampling_params.h), whose messages are vLLM's, and fails with
ValueError.
"""

from __future__ import annotations

import copy
import enum
import json
from dataclasses import dataclass, fields
from typing import Any, Optional, Union

from . import _core

_SAMPLING_EPS = 1e-5


class RequestOutputKind(enum.Enum):
    """What each RequestOutput of a request holds (vLLM's values)."""

    CUMULATIVE = 0  # all text so far
    DELTA = 1  # only what is new
    FINAL_ONLY = 2  # one output, when the request finishes


_CORE_OUTPUT_KIND = {
    RequestOutputKind.CUMULATIVE: _core.RequestOutputKind.CUMULATIVE,
    RequestOutputKind.DELTA: _core.RequestOutputKind.DELTA,
    RequestOutputKind.FINAL_ONLY: _core.RequestOutputKind.FINAL_ONLY,
}


@dataclass
class StructuredOutputsParams:
    """One constraint the output must satisfy (vLLM's StructuredOutputsParams)."""

    json: Optional[Union[str, dict]] = None
    regex: Optional[str] = None
    choice: Optional[list[str]] = None
    grammar: Optional[str] = None
    json_object: Optional[bool] = None
    disable_fallback: bool = False
    disable_any_whitespace: bool = False
    disable_additional_properties: bool = False
    whitespace_pattern: Optional[str] = None
    structural_tag: Optional[str] = None

    def __post_init__(self) -> None:
        # vLLM's check: json_object counts once it is set, even to False.
        count = sum(value is not None for value in (self.json, self.regex, self.choice,
                                                    self.grammar, self.json_object,
                                                    self.structural_tag))
        if count > 1:
            raise ValueError("You can only use one kind of structured outputs constraint but "
                             f"multiple are specified: {self.__dict__}")

    def _to_core(self) -> _core.StructuredOutputsParams:
        if self.structural_tag is not None:
            raise NotImplementedError(
                "StructuredOutputsParams.structural_tag is not supported by vllm-cpp")
        core = _core.StructuredOutputsParams()
        if self.json is not None:
            core.json = self.json if isinstance(self.json, str) else json.dumps(self.json)
        core.regex = self.regex
        core.choice = None if self.choice is None else list(self.choice)
        core.grammar = self.grammar
        core.json_object = bool(self.json_object)
        core.disable_any_whitespace = self.disable_any_whitespace
        core.disable_additional_properties = self.disable_additional_properties
        core.whitespace_pattern = self.whitespace_pattern
        return core  # validated with the SamplingParams that holds it


# Fields vLLM has that vllm-cpp does not implement: the only value each accepts.
_UNIMPLEMENTED_DEFAULTS = {
    "detokenize": True,
    "logits_processors": None,
}


@dataclass
class SamplingParams:
    """Sampling parameters for text generation, with vLLM's names, defaults and messages."""

    n: int = 1
    best_of: Optional[int] = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: Optional[int] = None
    stop: Optional[Union[str, list[str]]] = None
    stop_token_ids: Optional[list[int]] = None
    ignore_eos: bool = False
    max_tokens: Optional[int] = 16
    min_tokens: int = 0
    logprobs: Optional[int] = None
    prompt_logprobs: Optional[int] = None
    detokenize: bool = True
    skip_special_tokens: bool = True
    spaces_between_special_tokens: bool = True
    logits_processors: Optional[Any] = None
    include_stop_str_in_output: bool = False
    truncate_prompt_tokens: Optional[int] = None
    output_kind: RequestOutputKind = RequestOutputKind.CUMULATIVE
    structured_outputs: Optional[StructuredOutputsParams] = None
    logit_bias: Optional[dict[int, float]] = None
    allowed_token_ids: Optional[list[int]] = None
    extra_args: Optional[dict[str, Any]] = None
    bad_words: Optional[list[str]] = None

    def __post_init__(self) -> None:
        if self.stop is None:
            self.stop = []
        elif isinstance(self.stop, str):
            self.stop = [self.stop]
        else:
            self.stop = list(self.stop)
        self.stop_token_ids = [] if self.stop_token_ids is None else list(self.stop_token_ids)
        self.bad_words = [] if self.bad_words is None else list(self.bad_words)
        if self.seed == -1:
            self.seed = None
        if self.best_of is not None and self.best_of != self.n:
            raise NotImplementedError(
                f"best_of={self.best_of} (other than n) is not supported by vllm-cpp")
        for name, default in _UNIMPLEMENTED_DEFAULTS.items():
            if getattr(self, name) != default:
                raise NotImplementedError(f"SamplingParams.{name}={getattr(self, name)!r} is not "
                                          "supported by vllm-cpp")
        if self.temperature < _SAMPLING_EPS:
            # Greedy: the other knobs would change nothing (vLLM resets them the same way).
            self.top_p = 1.0
            self.top_k = 0
            self.min_p = 0.0
        self._to_core()  # raises ValueError with vLLM's message for an invalid field

    def clone(self) -> "SamplingParams":
        return copy.deepcopy(self)

    def _to_core(self, default_seed: Optional[int] = None,
                 output_kind: Optional[RequestOutputKind] = None) -> _core.SamplingParams:
        """The C++ struct; `default_seed` seeds a request that has no seed of its own."""
        core = _core.SamplingParams()
        for name in ("n", "presence_penalty", "frequency_penalty", "repetition_penalty",
                     "temperature", "top_p", "top_k", "min_p", "stop", "stop_token_ids",
                     "ignore_eos", "max_tokens", "min_tokens", "logprobs", "prompt_logprobs",
                     "include_stop_str_in_output", "skip_special_tokens",
                     "spaces_between_special_tokens", "truncate_prompt_tokens", "bad_words"):
            setattr(core, name, getattr(self, name))
        core.seed = self.seed if self.seed is not None else default_seed
        core.logit_bias = {} if self.logit_bias is None else dict(self.logit_bias)
        core.allowed_token_ids = self.allowed_token_ids
        core.output_kind = _CORE_OUTPUT_KIND[output_kind or self.output_kind]
        if self.structured_outputs is not None:
            core.structured_outputs = self.structured_outputs._to_core()
        message = core.validate()
        if message:
            raise ValueError(message)
        return core

    @classmethod
    def _from_core(cls, core: _core.SamplingParams) -> "SamplingParams":
        """vLLM's get_default_sampling_params: the model's generation defaults."""
        names = {f.name for f in fields(cls)}
        values = {
            name: getattr(core, name)
            for name in ("temperature", "top_p", "top_k", "min_p", "repetition_penalty",
                         "presence_penalty", "frequency_penalty", "max_tokens")
            if name in names
        }
        return cls(**values)

