"""vLLM's output classes: RequestOutput, CompletionOutput and Logprob, built from the engine's."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional, Union

from . import _core


@dataclass
class Logprob:
    """One token's log probability, its rank (1 = most likely) and its text."""

    logprob: float
    rank: Optional[int] = None
    decoded_token: Optional[str] = None


# One position: token id -> Logprob (the sampled token plus the top ones).
PositionLogprobs = dict[int, Logprob]


@dataclass
class CompletionOutput:
    """One sequence of a request: its text, token ids and why it stopped."""

    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: Optional[float]
    logprobs: Optional[list[PositionLogprobs]]
    finish_reason: Optional[str] = None  # "stop", "length" or "abort"; None while unfinished
    stop_reason: Union[int, str, None] = None  # the stop string or token id that ended it
    lora_request: Any = None

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class RequestMetrics:
    """What vllm-cpp measures of a request (vLLM's RequestMetrics names; None: not measured)."""

    time_in_queue: Optional[float] = None  # seconds before it was first scheduled


class RequestOutput:
    """The output of one request so far (all of it once `finished`)."""

    def __init__(self, request_id: str, prompt: Optional[str], prompt_token_ids: list[int],
                 prompt_logprobs: Optional[list[Optional[PositionLogprobs]]],
                 outputs: list[CompletionOutput], finished: bool,
                 metrics: Optional[RequestMetrics] = None, lora_request: Any = None,
                 encoder_prompt: Optional[str] = None,
                 encoder_prompt_token_ids: Optional[list[int]] = None,
                 num_cached_tokens: Optional[int] = None) -> None:
        self.request_id = request_id
        self.prompt = prompt
        self.prompt_token_ids = prompt_token_ids
        self.prompt_logprobs = prompt_logprobs
        self.outputs = outputs
        self.finished = finished
        self.metrics = metrics
        self.lora_request = lora_request
        self.encoder_prompt = encoder_prompt
        self.encoder_prompt_token_ids = encoder_prompt_token_ids
        self.num_cached_tokens = num_cached_tokens

    def __repr__(self) -> str:
        return (f"RequestOutput(request_id={self.request_id}, prompt={self.prompt!r}, "
                f"prompt_token_ids={self.prompt_token_ids}, "
                f"prompt_logprobs={self.prompt_logprobs}, outputs={self.outputs}, "
                f"finished={self.finished}, metrics={self.metrics}, "
                f"num_cached_tokens={self.num_cached_tokens})")


def position_logprobs(position: dict) -> PositionLogprobs:
    return {token_id: Logprob(entry.logprob, entry.rank, entry.decoded_token)
            for token_id, entry in position.items()}


def _completion_from_core(completion: _core.CompletionOutput) -> CompletionOutput:
    logprobs = completion.logprobs
    return CompletionOutput(
        index=completion.index,
        text=completion.text,
        token_ids=completion.token_ids,
        # vLLM reports a cumulative logprob only when logprobs were asked for.
        cumulative_logprob=None if logprobs is None else completion.cumulative_logprob,
        logprobs=None if logprobs is None else [position_logprobs(p) for p in logprobs],
        finish_reason=completion.finish_reason or None,
        stop_reason=completion.stop_reason,
    )


def request_output_from_core(output: _core.RequestOutput, prompt: Optional[str]) -> RequestOutput:
    """vLLM's RequestOutput of an engine output; `prompt` is the text the caller gave (None
    for token ids given alone)."""
    prompt_logprobs = output.prompt_logprobs
    if prompt_logprobs is not None:
        prompt_logprobs = [None if p is None else position_logprobs(p) for p in prompt_logprobs]
    return RequestOutput(
        request_id=output.request_id,
        prompt=prompt,
        prompt_token_ids=output.prompt_token_ids,
        prompt_logprobs=prompt_logprobs,
        outputs=[_completion_from_core(c) for c in output.outputs],
        finished=output.finished,
        metrics=RequestMetrics(time_in_queue=output.queue_seconds),
        num_cached_tokens=output.num_cached_tokens,
    )


class CumulativeOutputs:
    """One request's outputs of vLLM's CUMULATIVE kind (all so far, at every step), assembled
    from the engine's DELTA ones: each step converts only the positions it adds. Asked for
    CUMULATIVE outputs, the engine would copy every position so far at each step, and Python
    would convert them all again, which made logprobs quadratic in the output's length."""

    def __init__(self) -> None:
        self._completions: dict[int, CompletionOutput] = {}
        self._prompt_logprobs: Optional[list[Optional[PositionLogprobs]]] = None

    def add(self, delta: RequestOutput) -> RequestOutput:
        """The request's cumulative output once `delta`, its next DELTA output, is added."""
        if delta.prompt_logprobs is not None:  # a delta brings them once
            self._prompt_logprobs = delta.prompt_logprobs
        for part in delta.outputs:
            whole = self._completions.setdefault(part.index, part)
            if whole is part:
                continue
            whole.text += part.text
            whole.token_ids.extend(part.token_ids)
            if part.logprobs is not None:
                if whole.logprobs is None:
                    whole.logprobs = []
                whole.logprobs.extend(part.logprobs)
            whole.cumulative_logprob = part.cumulative_logprob
            whole.finish_reason = part.finish_reason
            whole.stop_reason = part.stop_reason
        # Every output has lists of its own (of the same Logprob objects), as the engine's have.
        outputs = [
            dataclasses.replace(whole, token_ids=list(whole.token_ids),
                                logprobs=None if whole.logprobs is None else list(whole.logprobs))
            for _, whole in sorted(self._completions.items())
        ]
        return RequestOutput(
            request_id=delta.request_id, prompt=delta.prompt,
            prompt_token_ids=delta.prompt_token_ids, prompt_logprobs=self._prompt_logprobs,
            outputs=outputs, finished=delta.finished, metrics=delta.metrics,
            num_cached_tokens=delta.num_cached_tokens)
