from vllm_cpp.outputs import Logprob  # noqa: F401
