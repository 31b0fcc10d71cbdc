from vllm_cpp.pooling import PoolingParams  # noqa: F401
