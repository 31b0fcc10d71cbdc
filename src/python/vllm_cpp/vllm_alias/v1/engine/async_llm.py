from vllm_cpp.async_llm import AsyncLLM  # noqa: F401
