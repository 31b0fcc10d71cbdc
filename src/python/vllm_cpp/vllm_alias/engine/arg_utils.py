from vllm_cpp.engine_args import AsyncEngineArgs, EngineArgs  # noqa: F401
