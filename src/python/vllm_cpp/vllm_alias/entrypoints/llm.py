from vllm_cpp.llm import LLM  # noqa: F401
