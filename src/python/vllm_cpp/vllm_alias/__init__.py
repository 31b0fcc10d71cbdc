"""`import vllm` for vllm-cpp: an alias of the vllm_cpp package, installed only on request
(python3 -m vllm_cpp.install_alias), never over a real vLLM. The names are vllm_cpp's own objects,
so `vllm.LLM is vllm_cpp.LLM`."""

from vllm_cpp import *  # noqa: F401,F403
from vllm_cpp import __all__, __version__  # noqa: F401

# install_alias recognises (and alone replaces or removes) a package holding this marker.
__vllm_cpp_alias__ = True
