# vLLM before 0.10 kept Logprob here.
from vllm_cpp.outputs import Logprob  # noqa: F401
