"""vllm_cpp: vLLM's offline and asyncio Python API over vllm-cpp's C++ engine.

A vLLM script runs by changing its import line:

    from vllm_cpp import LLM, SamplingParams
    llm = LLM(model="stories260K.gguf")
    outputs = llm.generate(["Once upon a time"], SamplingParams(temperature=0.8, top_p=0.95))
"""

from .async_llm import AsyncLLM, AsyncLLMEngine
from .beam_search import BeamSearchOutput, BeamSearchParams, BeamSearchSequence
from .engine_args import AsyncEngineArgs, EngineArgs
from .inputs import EmbedsPrompt, TextPrompt, TokensPrompt
from .llm import LLM
from .llm_engine import LLMEngine
from .outputs import CompletionOutput, Logprob, RequestMetrics, RequestOutput
from .pooling import (ClassificationOutput, ClassificationRequestOutput, EmbeddingOutput,
                      EmbeddingRequestOutput, PoolingOutput, PoolingParams, PoolingRequestOutput,
                      ScoringOutput, ScoringRequestOutput)
from .sampling_params import RequestOutputKind, SamplingParams, StructuredOutputsParams
from .tokenizer import Tokenizer

__version__ = "0.1.0"

__all__ = [
    "AsyncEngineArgs",
    "AsyncLLM",
    "AsyncLLMEngine",
    "BeamSearchOutput",
    "BeamSearchParams",
    "BeamSearchSequence",
    "ClassificationOutput",
    "ClassificationRequestOutput",
    "CompletionOutput",
    "EmbeddingOutput",
    "EmbeddingRequestOutput",
    "EngineArgs",
    "LLM",
    "LLMEngine",
    "PoolingOutput",
    "PoolingParams",
    "PoolingRequestOutput",
    "Logprob",
    "RequestMetrics",
    "RequestOutput",
    "RequestOutputKind",
    "SamplingParams",
    "ScoringOutput",
    "ScoringRequestOutput",
    "StructuredOutputsParams",
    "EmbedsPrompt",
    "TextPrompt",
    "TokensPrompt",
    "Tokenizer",
]
