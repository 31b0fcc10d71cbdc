// The `vllm_cpp._core` extension module: pybind11 bindings of the C++ engine API that the pure
// Python package (src/python/vllm_cpp/) wraps into vLLM's offline and asyncio API.
#include <pybind11/pybind11.h>

#include "python/bindings.h"

PYBIND11_MODULE(_core, module) {
  module.doc() = "vllm-cpp's C++ engine, bound for the vllm_cpp package";
  vllm::python::BindParams(module);
  vllm::python::BindOutputs(module);
  vllm::python::BindBeamSearch(module);
  vllm::python::BindTokenizer(module);
  vllm::python::BindEngine(module);
  vllm::python::BindAsyncEngine(module);
}
