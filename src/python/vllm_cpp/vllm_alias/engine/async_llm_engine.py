from vllm_cpp.async_llm import AsyncLLMEngine  # noqa: F401
