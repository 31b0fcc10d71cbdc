"""vLLM's pooling API types: PoolingParams and the outputs of LLM.embed / classify / score /
encode (vllm/pooling_params.py, vllm/outputs.py). Vectors are lists of floats (vLLM gives torch
tensors for PoolingOutput.data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from . import _core


@dataclass
class PoolingParams:
    """What a pooling request asks of the model's pooler beyond its own configuration:
    `dimensions` (Matryoshka: the first n values, normalized again), `normalize` (embeddings,
    default True), `use_activation` (classification and scores: softmax or sigmoid, default
    True; `activation` is its older name), `truncate_prompt_tokens` (keep the last k tokens),
    `task` (AsyncLLM.encode's: "encode", "embed" or "classify"; None: "encode")."""

    dimensions: Optional[int] = None
    normalize: Optional[bool] = None
    use_activation: Optional[bool] = None
    activation: Optional[bool] = None
    truncate_prompt_tokens: Optional[int] = None
    task: Optional[str] = None

    def _to_core(self, truncate_prompt_tokens: Optional[int] = None) -> _core.PoolingParams:
        core = _core.PoolingParams()
        core.dimensions = self.dimensions
        core.normalize = self.normalize
        core.use_activation = (self.use_activation if self.use_activation is not None
                               else self.activation)
        core.truncate_prompt_tokens = (truncate_prompt_tokens if truncate_prompt_tokens
                                       is not None else self.truncate_prompt_tokens)
        return core


@dataclass
class PoolingOutput:
    data: list[float] = field(default_factory=list)


@dataclass
class EmbeddingOutput:
    embedding: list[float] = field(default_factory=list)

    @property
    def hidden_size(self) -> int:
        return len(self.embedding)


@dataclass
class ClassificationOutput:
    probs: list[float] = field(default_factory=list)

    @property
    def num_classes(self) -> int:
        return len(self.probs)


@dataclass
class ScoringOutput:
    score: float = 0.0


@dataclass
class PoolingRequestOutput:
    """One request's pooled output; `outputs` is a PoolingOutput, EmbeddingOutput,
    ClassificationOutput or ScoringOutput as the task says."""

    request_id: str
    outputs: object
    prompt_token_ids: list[int]
    finished: bool = True


class EmbeddingRequestOutput(PoolingRequestOutput):
    """outputs: EmbeddingOutput."""


class ClassificationRequestOutput(PoolingRequestOutput):
    """outputs: ClassificationOutput."""


class ScoringRequestOutput(PoolingRequestOutput):
    """outputs: ScoringOutput."""


# Per task: the request output class and the form of its values.
_FORMS_OF_TASK = {
    "embed": (EmbeddingRequestOutput, lambda values: EmbeddingOutput(embedding=values)),
    "classify": (ClassificationRequestOutput, lambda values: ClassificationOutput(probs=values)),
    "encode": (PoolingRequestOutput, lambda values: PoolingOutput(data=values)),
}


def pooling_outputs_from_core(task: str, rows: list) -> list[PoolingRequestOutput]:
    request_class, make = _FORMS_OF_TASK[task]
    return [request_class(request_id, make(values), prompt_token_ids)
            for request_id, prompt_token_ids, values in rows]


def scoring_outputs_from_core(rows: list) -> list[ScoringRequestOutput]:
    return [ScoringRequestOutput(request_id, ScoringOutput(score=score), prompt_token_ids)
            for request_id, prompt_token_ids, score in rows]
