from vllm_cpp.beam_search import BeamSearchParams  # noqa: F401
from vllm_cpp.sampling_params import (RequestOutputKind, SamplingParams,  # noqa: F401
                                      StructuredOutputsParams)
