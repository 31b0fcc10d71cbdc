from vllm_cpp.outputs import CompletionOutput, RequestOutput  # noqa: F401
from vllm_cpp.pooling import (ClassificationOutput, ClassificationRequestOutput,  # noqa: F401
                              EmbeddingOutput, EmbeddingRequestOutput, PoolingOutput,
                              PoolingRequestOutput, ScoringOutput, ScoringRequestOutput)
