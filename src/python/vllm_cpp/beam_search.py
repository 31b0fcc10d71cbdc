"""vLLM's beam search classes: BeamSearchParams (LLM.beam_search's parameters) and
BeamSearchOutput / BeamSearchSequence (its results), over the engine's beam search
(include/vllm/beam_search.h)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from . import _core
from .outputs import PositionLogprobs, position_logprobs


@dataclass
class BeamSearchParams:
    """Beam search parameters (vLLM's names and defaults)."""

    beam_width: int
    max_tokens: int
    ignore_eos: bool = False
    temperature: float = 0.0
    length_penalty: float = 1.0
    include_stop_str_in_output: bool = False

    def _to_core(self) -> _core.BeamSearchParams:
        core = _core.BeamSearchParams()
        for name in ("beam_width", "max_tokens", "ignore_eos", "temperature", "length_penalty",
                     "include_stop_str_in_output"):
            setattr(core, name, getattr(self, name))
        message = core.validate()
        if message:
            raise ValueError(message)
        return core


@dataclass
class BeamSearchSequence:
    """One beam: the prompt's token ids then the generated ones, and the text of them all."""

    tokens: list[int]
    logprobs: list[PositionLogprobs]
    lora_request: None = None
    cum_logprob: float = 0.0
    text: Optional[str] = None
    finish_reason: Optional[str] = None  # "stop" (EOS), "length", None (live at max_tokens)
    stop_reason: Union[int, str, None] = None


@dataclass
class BeamSearchOutput:
    """The best beam_width sequences of one prompt, best first."""

    sequences: list[BeamSearchSequence] = field(default_factory=list)


def beam_search_output_from_core(output: _core.BeamSearchOutput) -> BeamSearchOutput:
    return BeamSearchOutput(sequences=[
        BeamSearchSequence(tokens=sequence.tokens,
                           logprobs=[position_logprobs(p) for p in sequence.logprobs],
                           cum_logprob=sequence.cum_logprob, text=sequence.text,
                           finish_reason=sequence.finish_reason or None,
                           stop_reason=sequence.stop_reason)
        for sequence in output.sequences
    ])
