// The engine tests' way to read a refusal: the message of the exception a call throws.
#pragma once

#include <exception>
#include <string>

namespace vllm {

// The what() of the `Exception` that `fn` throws; empty when it throws none.
template <typename Exception = std::exception, typename Fn>
std::string ThrownMessage(Fn fn) {
  try {
    fn();
  } catch (const Exception& error) {
    return error.what();
  }
  return "";
}

}  // namespace vllm
