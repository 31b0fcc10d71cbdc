from vllm_cpp.async_llm import EngineDeadError  # noqa: F401
