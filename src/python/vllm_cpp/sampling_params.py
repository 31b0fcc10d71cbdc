"""vLLM's SamplingParams: how one request is sampled and when it stops.

Every field and default of vLLM's (vllm/sampling_params.py). Fields the C++ engine does not
implement accept vLLM's default and raise NotImplementedError for any other value. The fields the
C++ struct has come from its field table (include/vllm/sampling_params_fields.h), as does the
validation, whose messages are vLLM's and fail with ValueError.
"""

from __future__ import annotations

import copy
import enum
import json
from dataclasses import dataclass, field
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


class SamplingParams:
    """Sampling parameters for text generation, with vLLM's names, defaults and messages.

    Its fields are the C++ table's rows (include/vllm/sampling_params_fields.h, with the C++
    defaults) plus _EXTRA_FIELDS, in vLLM's order; the dataclass is made below."""

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
        # vLLM validates at construction; an engine's add_request validates what it is given.
        message = self._to_core().validate()
        if message:
            raise ValueError(message)

    def clone(self) -> "SamplingParams":
        return copy.deepcopy(self)

    def _to_core(self, default_seed: Optional[int] = None,
                 output_kind: Optional[RequestOutputKind] = None) -> _core.SamplingParams:
        """The C++ struct; `default_seed` seeds a request that has no seed of its own."""
        core = _core.SamplingParams()
        for name in _core.SAMPLING_FIELD_NAMES:
            setattr(core, name, getattr(self, name))
        core.seed = self.seed if self.seed is not None else default_seed
        core.logit_bias = {} if self.logit_bias is None else dict(self.logit_bias)
        core.output_kind = _CORE_OUTPUT_KIND[output_kind or self.output_kind]
        if self.structured_outputs is not None:
            core.structured_outputs = self.structured_outputs._to_core()
        return core

    @classmethod
    def _from_core(cls, core: _core.SamplingParams) -> "SamplingParams":
        """vLLM's get_default_sampling_params: the model's generation defaults."""
        values = {name: getattr(core, name) for name in _core.GENERATION_CONFIG_FIELD_NAMES}
        values["max_tokens"] = core.max_tokens  # generation_config's max_new_tokens, else 16
        return cls(**values)


# vLLM's fields that are not C++ table rows (Python-only ones and those of their own shape), each
# after the row vLLM declares it after, so that positional arguments keep vLLM's order.
_EXTRA_FIELDS = {
    "n": [("best_of", Optional[int], None)],
    "prompt_logprobs": [("detokenize", bool, True)],
    "spaces_between_special_tokens": [("logits_processors", Optional[Any], None)],
    "truncate_prompt_tokens": [
        ("output_kind", RequestOutputKind, RequestOutputKind.CUMULATIVE),
        ("structured_outputs", Optional[StructuredOutputsParams], None),
        ("logit_bias", Optional[dict[int, float]], None),
    ],
    "allowed_token_ids": [("extra_args", Optional[dict[str, Any]], None)],
}


def _make_sampling_params_dataclass() -> None:
    core_defaults = _core.SamplingParams()
    for name in _core.SAMPLING_FIELD_NAMES:
        default = getattr(core_defaults, name)
        SamplingParams.__annotations__[name] = Any
        setattr(SamplingParams, name,
                field(default_factory=lambda value=default: list(value))
                if isinstance(default, list) else field(default=default))
        for extra, annotation, extra_default in _EXTRA_FIELDS.get(name, ()):
            SamplingParams.__annotations__[extra] = annotation
            setattr(SamplingParams, extra, field(default=extra_default))


SamplingParams.__annotations__ = {}
_make_sampling_params_dataclass()
SamplingParams = dataclass(SamplingParams)
