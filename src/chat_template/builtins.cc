// Builtin global functions. They keep no state, so one table serves every rendering.
#include "chat_template/builtins.h"

#include <ctime>
#include <unordered_map>

#include "chat_template/arguments.h"
#include "chat_template/errors.h"
#include "chat_template/limits.h"
#include "chat_template/operators.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

Value Range(const CallArgs& args, RenderBudget&) {
  if (!args.keyword.empty()) throw RenderError("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) throw RenderError("range() takes 1 to 3 arguments");
  int64_t start = 0, step = 1, stop = 0;
  if (p.size() == 1) {
    stop = IntArgument(p[0], "range");
  } else {
    start = IntArgument(p[0], "range");
    stop = IntArgument(p[1], "range");
    if (p.size() == 3) step = IntArgument(p[2], "range");
  }
  if (step == 0) throw RenderError("range() step must not be zero");
  uint64_t count = 0;
  if (step > 0 && start < stop) {
    count = (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) /
                static_cast<uint64_t>(step) +
            1;
  } else if (step < 0 && start > stop) {
    count = (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) /
                (0 - static_cast<uint64_t>(step)) +
            1;
  }
  if (count > static_cast<uint64_t>(kMaxListItems)) {
    throw RenderError("range() of more than " + std::to_string(kMaxListItems) + " items");
  }
  std::vector<Value> items;
  items.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    items.push_back(Value::Int(start + static_cast<int64_t>(i) * step));
  }
  return Value::List(std::move(items));
}

// The entries of dict(...) and namespace(...): an optional dict or list of pairs, then keywords.
// Each entry taken from the positional argument costs a step.
std::vector<std::pair<Value, Value>> DictEntries(std::string_view function, const CallArgs& args,
                                                 RenderBudget& budget) {
  if (args.positional.size() > 1) {
    throw RenderError(std::string(function) + "() takes at most 1 positional argument");
  }
  DictData dict;
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_dict()) {
      for (const auto& [key, value] : source.AsDict().entries) {
        budget.CountStep();
        dict.Set(key, value);
      }
    } else {
      for (const Value& pair : Iterate(source)) {
        budget.CountStep();
        std::vector<Value> items = Iterate(pair);
        if (items.size() != 2) {
          throw RenderError(std::string(function) + "() needs pairs of key and value");
        }
        dict.Set(items[0], items[1]);
      }
    }
  }
  for (const auto& [key, value] : args.keyword) dict.Set(Value::String(key), value);
  return std::move(dict.entries);
}

Value Dict(const CallArgs& args, RenderBudget& budget) {
  return Value::Dict(DictEntries("dict", args, budget));
}

Value Namespace(const CallArgs& args, RenderBudget& budget) {
  return Value::Namespace(DictEntries("namespace", args, budget));
}

Value RaiseException(const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("raise_exception", args, {{"message"}});
  throw RaisedException(ToStr(a[0], budget));
}

Value StrftimeNow(const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("strftime_now", args, {{"format"}});
  const std::string& format = StringArgument(a[0], "strftime_now");
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  // strftime gives 0 both for a buffer too small and for an empty result: grow a few times.
  for (size_t size = 256; size <= (size_t{1} << 20); size *= 16) {
    std::string out(size, '\0');
    size_t written = std::strftime(out.data(), out.size(), format.c_str(), &local);
    if (written > 0 || format.empty()) {
      out.resize(written);
      return Value::String(budget.WithinLimit(std::move(out)));
    }
  }
  return Value::String("");
}

const std::unordered_map<std::string_view, Value>& Builtins() {
  static const std::unordered_map<std::string_view, Value> builtins{
      {"range", Value::Callable("range", Range)},
      {"dict", Value::Callable("dict", Dict)},
      {"namespace", Value::Callable("namespace", Namespace)},
      {"raise_exception", Value::Callable("raise_exception", RaiseException)},
      {"strftime_now", Value::Callable("strftime_now", StrftimeNow)},
  };
  return builtins;
}

}  // namespace

const Value* FindBuiltin(std::string_view name) {
  auto found = Builtins().find(name);
  return found == Builtins().end() ? nullptr : &found->second;
}

}  // namespace vllm::jinja
