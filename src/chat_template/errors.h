// The exceptions the template engine uses inside itself; ChatTemplate turns them into vllm::Error
// at its boundary, so none escapes to callers.
#pragma once

#include <stdexcept>
#include <string>

namespace vllm::jinja {

// Template source that does not follow the grammar. `line` is 1-based.
class SyntaxError : public std::runtime_error {
 public:
  SyntaxError(const std::string& message, int line) : std::runtime_error(message), line_(line) {}
  int line() const { return line_; }

 private:
  int line_;
};

// A problem while rendering: a type error, a division by zero, a limit reached... `line` stays 0
// until the evaluator, unwinding, fills in the line of the innermost expression or statement.
class RenderError : public std::runtime_error {
 public:
  explicit RenderError(const std::string& message) : std::runtime_error(message) {}
  int line = 0;
};

// The template called raise_exception(message): the message is reported exactly as given.
class RaisedException : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace vllm::jinja
