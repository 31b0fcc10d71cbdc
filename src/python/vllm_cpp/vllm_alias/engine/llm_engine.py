from vllm_cpp.llm_engine import LLMEngine  # noqa: F401
