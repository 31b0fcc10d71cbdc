// Error handling without exceptions on hot or untrusted paths: Status (ok or a message) and
// Expected<T> (a value or a message).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace vllm {

// An error message. Errors are plain text that names the problem for the user.
struct Error {
  std::string message;
};

class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)) {}  // NOLINT: implicit on purpose
  static Status Ok() { return Status(); }

  bool ok() const { return !error_.has_value(); }
  const std::string& message() const { return *error_; }
  const Status& status() const { return *this; }

 private:
  std::optional<std::string> error_;
};

template <typename T>
class Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}           // NOLINT: implicit on purpose
  Expected(Error error) : error_(std::move(error.message)) {}  // NOLINT: implicit on purpose

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }
  Status status() const { return ok() ? Status() : Status(Error{error_}); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  std::string error_;
};

}  // namespace vllm

// Returns the error of a Status or Expected expression from the enclosing function.
#define VLLM_RETURN_IF_ERROR(expr)                                  \
  do {                                                              \
    auto vllm_status_ = (expr);                                     \
    if (!vllm_status_.ok()) return ::vllm::Error{vllm_status_.status().message()}; \
  } while (0)
