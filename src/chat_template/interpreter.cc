// The tree-walking interpreter. Output goes to one buffer, swapped out while a macro call or a
// block `set` captures its body. Guards bound recursion; the rendering's RenderBudget bounds its
// steps, time and strings.
#include "chat_template/interpreter.h"

#include <array>
#include <memory>
#include <optional>
#include <string_view>

#include "chat_template/builtins.h"
#include "chat_template/errors.h"
#include "chat_template/filters.h"
#include "chat_template/limits.h"
#include "chat_template/operators.h"
#include "chat_template/predicates.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

// Variables visible at one point. The template has a scope; each loop iteration and macro call
// opens one whose parent is the scope around it (for a macro, the scope that defined it).
struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> variables;

  const Value* Find(std::string_view name) const {
    for (const Scope* scope = this; scope != nullptr; scope = scope->parent.get()) {
      for (const auto& [variable, value] : scope->variables) {
        if (variable == name) return &value;
      }
    }
    return nullptr;
  }

  void Set(std::string_view name, Value value) {
    for (auto& [variable, current] : variables) {
      if (variable == name) {
        current = std::move(value);
        return;
      }
    }
    variables.emplace_back(std::string(name), std::move(value));
  }
};
using ScopePtr = std::shared_ptr<Scope>;

ScopePtr ChildScope(const ScopePtr& parent) {
  auto scope = std::make_shared<Scope>();
  scope->parent = parent;
  return scope;
}

// How a statement ends: normally, or by {% break %} / {% continue %}.
enum class Flow { kNormal, kBreak, kContinue };

// Sets `names` to `value`, unpacking it when there are several names.
void Bind(const std::vector<std::string>& names, const Value& value, Scope& scope) {
  if (names.size() == 1) {
    scope.Set(names[0], value);
    return;
  }
  std::vector<Value> items = Iterate(value);
  if (items.size() != names.size()) {
    throw RenderError((items.size() > names.size() ? "too many" : "not enough") +
                      std::string(" values to unpack (expected ") + std::to_string(names.size()) +
                      ", got " + std::to_string(items.size()) + ")");
  }
  for (size_t i = 0; i < names.size(); ++i) scope.Set(names[i], std::move(items[i]));
}

// The fields of the `loop` variable; their names are made once and shared by every loop.
enum LoopField {
  kIndex,
  kIndex0,
  kRevindex,
  kRevindex0,
  kFirst,
  kLast,
  kLength,
  kDepth,
  kDepth0,
  kCycle,
  kChanged,
  kPrevitem,
  kNextitem,
  kLoopFieldCount
};

const Value& LoopFieldName(LoopField field) {
  static const std::array<Value, kLoopFieldCount> names = {
      Value::String("index"),     Value::String("index0"),  Value::String("revindex"),
      Value::String("revindex0"), Value::String("first"),   Value::String("last"),
      Value::String("length"),    Value::String("depth"),   Value::String("depth0"),
      Value::String("cycle"),     Value::String("changed"), Value::String("previtem"),
      Value::String("nextitem"),
  };
  return names[field];
}

// The `loop` variable of a for loop: a dict made for each iteration, whose cycle() reads the
// current iteration and whose changed(values) tells whether they differ from the last call's.
class LoopVariable {
 public:
  explicit LoopVariable(const std::vector<Value>& items)
      : items_(items), current_(std::make_shared<size_t>(0)) {
    cycle_ = Value::Callable("cycle", [current = current_](const CallArgs& args, RenderBudget&) {
      if (args.positional.empty()) throw RenderError("loop.cycle() needs at least one value");
      return args.positional[*current % args.positional.size()];
    });
    auto last = std::make_shared<std::optional<Value>>();
    changed_ = Value::Callable("changed", [last](const CallArgs& args, RenderBudget& budget) {
      if (!args.keyword.empty()) throw RenderError("loop.changed() takes no keyword arguments");
      Value values = Value::Tuple(args.positional);
      if (*last && Equals(**last, values, budget)) return Value::Bool(false);
      *last = std::move(values);
      return Value::Bool(true);
    });
  }

  Value ForIteration(size_t index) {
    *current_ = index;
    auto count = static_cast<int64_t>(items_.size());
    auto i = static_cast<int64_t>(index);
    std::vector<std::pair<Value, Value>> entries;
    entries.reserve(kLoopFieldCount);
    auto add = [&entries](LoopField field, Value value) {
      entries.emplace_back(LoopFieldName(field), std::move(value));
    };
    add(kIndex, Value::Int(i + 1));
    add(kIndex0, Value::Int(i));
    add(kRevindex, Value::Int(count - i));
    add(kRevindex0, Value::Int(count - i - 1));
    add(kFirst, Value::Bool(i == 0));
    add(kLast, Value::Bool(i == count - 1));
    add(kLength, Value::Int(count));
    add(kDepth, Value::Int(1));
    add(kDepth0, Value::Int(0));
    add(kCycle, cycle_);
    add(kChanged, changed_);
    if (index > 0) add(kPrevitem, items_[index - 1]);
    if (index + 1 < items_.size()) add(kNextitem, items_[index + 1]);
    return Value::Dict(std::move(entries));
  }

 private:
  const std::vector<Value>& items_;
  std::shared_ptr<size_t> current_;
  Value cycle_;
  Value changed_;
};

// The expression as the template wrote it, for messages: `messages[0].content`, or "value" for an
// expression that is not a chain of names, attributes and literal keys.
std::string Describe(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kName:
      return static_cast<const NameExpr&>(expr).name;
    case ExprKind::kAttribute: {
      const auto& attribute = static_cast<const AttributeExpr&>(expr);
      return Describe(*attribute.object) + "." + attribute.name;
    }
    case ExprKind::kSubscript: {
      const auto& subscript = static_cast<const SubscriptExpr&>(expr);
      std::string key = "...";
      if (subscript.key->kind == ExprKind::kLiteral) {
        const Value& literal = static_cast<const LiteralExpr&>(*subscript.key).value;
        if (literal.is_string()) key = "'" + literal.AsString() + "'";
        if (literal.is_int()) key = std::to_string(literal.AsInt());
      }
      return Describe(*subscript.object) + "[" + key + "]";
    }
    default:
      return "value";
  }
}

// Reading an attribute or item of undefined fails, as in Jinja.
void CheckDefined(const Value& object, const Expr& expr) {
  if (object.is_undefined()) throw RenderError("'" + Describe(expr) + "' is undefined");
}

class Interpreter {
 public:
  explicit Interpreter(RenderBudget& budget) : budget_(budget) {}

  std::string Run(const Template& tmpl, std::vector<std::pair<std::string, Value>> variables) {
    auto root = std::make_shared<Scope>();
    root->variables = std::move(variables);
    std::string out;
    output_ = &out;
    ExecuteBody(tmpl.body, root);
    return out;
  }

 private:
  // Counts one level of evaluation nesting, which recursion through macros also deepens.
  class DepthGuard {
   public:
    explicit DepthGuard(Interpreter& interpreter) : interpreter_(interpreter) {
      if (++interpreter_.depth_ > kMaxEvaluationDepth) {
        --interpreter_.depth_;
        throw RenderError("template evaluation nested too deeply (unbounded recursion?)");
      }
    }
    ~DepthGuard() { --interpreter_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Interpreter& interpreter_;
  };

  // Sends output to `buffer` while alive.
  class OutputCapture {
   public:
    OutputCapture(Interpreter& interpreter, std::string* buffer)
        : interpreter_(interpreter), saved_(interpreter.output_) {
      interpreter_.output_ = buffer;
    }
    ~OutputCapture() { interpreter_.output_ = saved_; }
    OutputCapture(const OutputCapture&) = delete;
    OutputCapture& operator=(const OutputCapture&) = delete;

   private:
    Interpreter& interpreter_;
    std::string* saved_;
  };

  void Write(std::string_view text) { budget_.AppendOutput(*output_, text); }

  // ---- Statements ----

  Flow ExecuteBody(const Body& body, const ScopePtr& scope) {
    for (const StmtPtr& statement : body) {
      Flow flow = Execute(*statement, scope);
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

  Flow Execute(const Stmt& statement, const ScopePtr& scope) {
    DepthGuard guard(*this);
    try {
      switch (statement.kind) {
        case StmtKind::kText:
          Write(static_cast<const TextStmt&>(statement).text);
          return Flow::kNormal;
        case StmtKind::kPrint:
          Write(ToStr(Eval(*static_cast<const PrintStmt&>(statement).value, scope), budget_));
          return Flow::kNormal;
        case StmtKind::kIf:
          return ExecuteIf(static_cast<const IfStmt&>(statement), scope);
        case StmtKind::kFor:
          return ExecuteFor(static_cast<const ForStmt&>(statement), scope);
        case StmtKind::kSet: {
          const auto& set = static_cast<const SetStmt&>(statement);
          Assign(set.target, Eval(*set.value, scope), *scope);
          return Flow::kNormal;
        }
        case StmtKind::kSetBlock:
          return ExecuteSetBlock(static_cast<const SetBlockStmt&>(statement), scope);
        case StmtKind::kMacro: {
          const auto& macro = static_cast<const MacroStmt&>(statement);
          scope->Set(macro.name, MacroValue(macro, scope));
          return Flow::kNormal;
        }
        case StmtKind::kCallBlock: {
          const auto& call_block = static_cast<const CallBlockStmt&>(statement);
          Value caller = MacroValue(*call_block.caller, scope);
          Write(ToStr(EvalCall(static_cast<const CallExpr&>(*call_block.call), scope, &caller),
                      budget_));
          return Flow::kNormal;
        }
        case StmtKind::kFilterBlock:
          return ExecuteFilterBlock(static_cast<const FilterBlockStmt&>(statement), scope);
        case StmtKind::kWith:
          return ExecuteWith(static_cast<const WithStmt&>(statement), scope);
        case StmtKind::kBreak:
          return Flow::kBreak;
        case StmtKind::kContinue:
          return Flow::kContinue;
      }
      return Flow::kNormal;
    } catch (RenderError& error) {
      if (error.line == 0) error.line = statement.line;
      throw;
    }
  }

  Flow ExecuteIf(const IfStmt& statement, const ScopePtr& scope) {
    for (const auto& [condition, body] : statement.branches) {
      if (Eval(*condition, scope).IsTruthy()) return ExecuteBody(body, scope);
    }
    return ExecuteBody(statement.otherwise, scope);
  }

  Flow ExecuteFor(const ForStmt& statement, const ScopePtr& scope) {
    std::vector<Value> items = Iterate(Eval(*statement.iterable, scope));
    if (statement.condition) {  // `for x in xs if cond`: loop.index and friends count kept items
      std::vector<Value> kept;
      ScopePtr filter_scope = ChildScope(scope);
      for (Value& item : items) {
        budget_.CountStep();
        filter_scope->variables.clear();
        Bind(statement.targets, item, *filter_scope);
        if (Eval(*statement.condition, filter_scope).IsTruthy()) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    if (items.empty()) return ExecuteBody(statement.otherwise, ChildScope(scope));
    LoopVariable loop(items);
    for (size_t i = 0; i < items.size(); ++i) {
      budget_.CountStep();
      ScopePtr iteration = ChildScope(scope);
      iteration->variables.emplace_back("loop", loop.ForIteration(i));
      Bind(statement.targets, items[i], *iteration);
      if (ExecuteBody(statement.body, iteration) == Flow::kBreak) break;
    }
    return Flow::kNormal;
  }

  Flow ExecuteSetBlock(const SetBlockStmt& statement, const ScopePtr& scope) {
    std::string captured;
    Flow flow;
    {
      OutputCapture capture(*this, &captured);
      flow = ExecuteBody(statement.body, scope);
    }
    Assign(statement.target, Value::String(std::move(captured)), *scope);
    return flow;
  }

  Flow ExecuteFilterBlock(const FilterBlockStmt& statement, const ScopePtr& scope) {
    std::string captured;
    Flow flow;
    {
      OutputCapture capture(*this, &captured);
      flow = ExecuteBody(statement.body, scope);
    }
    if (flow != Flow::kNormal) return flow;  // break and continue leave the output unwritten
    Value value = Value::String(std::move(captured));
    for (const FilterCall& filter : statement.filters) {
      value = ApplyFilter(filter.name, value, EvalArguments(filter.args, scope), budget_);
    }
    Write(ToStr(value, budget_));
    return Flow::kNormal;
  }

  // The values are computed before any name is set, in the scope around the block.
  Flow ExecuteWith(const WithStmt& statement, const ScopePtr& scope) {
    ScopePtr inner = ChildScope(scope);
    for (const auto& [name, value] : statement.assignments) {
      inner->variables.emplace_back(name, Eval(*value, scope));
    }
    return ExecuteBody(statement.body, inner);
  }

  void Assign(const AssignTarget& target, const Value& value, Scope& scope) {
    if (target.attribute.empty()) {
      Bind(target.names, value, scope);
      return;
    }
    const Value* object = scope.Find(target.names[0]);
    if (object == nullptr || !object->is_namespace()) {
      throw RenderError("cannot assign attribute on non-namespace object '" + target.names[0] +
                        "'");
    }
    if (Reaches(value, *object)) throw RenderError("cannot put a namespace inside itself");
    object->AsDict().Set(Value::String(target.attribute), value);
  }

  // The macro as a value. It holds its defining scope weakly: that scope may hold the macro.
  Value MacroValue(const MacroStmt& macro, const ScopePtr& scope) {
    std::weak_ptr<Scope> home = scope;
    return Value::Callable(macro.name, [this, &macro, home](const CallArgs& args, RenderBudget&) {
      return CallMacro(macro, home, args);
    });
  }

  Value CallMacro(const MacroStmt& macro, const std::weak_ptr<Scope>& home, const CallArgs& args) {
    ScopePtr parent = home.lock();
    if (!parent) throw RenderError("macro '" + macro.name + "' called after its scope ended");
    if (macro_depth_ >= kMaxMacroDepth) {
      throw RenderError("macro calls nested deeper than " + std::to_string(kMaxMacroDepth) +
                        " (unbounded recursion?)");
    }
    budget_.CountStep();
    ++macro_depth_;
    struct DepthRestore {
      int& depth;
      ~DepthRestore() { --depth; }
    } restore{macro_depth_};

    // Arguments bind to parameters by position, then by name; extra ones go to varargs and
    // kwargs (but `caller`, from a call block, is set as is), and parameters left out take their
    // defaults (or stay undefined).
    ScopePtr frame = ChildScope(parent);
    const auto& parameters = macro.parameters;
    std::vector<std::optional<Value>> bound(parameters.size());
    std::vector<Value> varargs;
    std::vector<std::pair<Value, Value>> kwargs;
    for (size_t i = 0; i < args.positional.size(); ++i) {
      if (i < parameters.size()) {
        bound[i] = args.positional[i];
      } else {
        varargs.push_back(args.positional[i]);
      }
    }
    for (const auto& [name, value] : args.keyword) {
      size_t index = 0;
      while (index < parameters.size() && parameters[index].name != name) ++index;
      if (index == parameters.size() && name == "caller") {
        frame->Set(name, value);
      } else if (index == parameters.size()) {
        kwargs.emplace_back(Value::String(name), value);
      } else if (bound[index]) {
        throw RenderError("macro '" + macro.name + "' got multiple values for argument '" + name +
                          "'");
      } else {
        bound[index] = value;
      }
    }
    for (size_t i = 0; i < parameters.size(); ++i) {
      Value value;
      if (bound[i]) {
        value = std::move(*bound[i]);
      } else if (parameters[i].default_value) {
        value = Eval(*parameters[i].default_value, frame);
      }
      frame->Set(parameters[i].name, std::move(value));
    }
    frame->Set("varargs", Value::Tuple(std::move(varargs)));
    frame->Set("kwargs", Value::Dict(std::move(kwargs)));

    std::string out;
    OutputCapture capture(*this, &out);
    ExecuteBody(macro.body, frame);
    return Value::String(std::move(out));
  }

  // ---- Expressions ----

  Value Eval(const Expr& expr, const ScopePtr& scope) {
    DepthGuard guard(*this);
    try {
      return EvalNode(expr, scope);
    } catch (RenderError& error) {
      if (error.line == 0) error.line = expr.line;
      throw;
    }
  }

  Value EvalNode(const Expr& expr, const ScopePtr& scope) {
    switch (expr.kind) {
      case ExprKind::kLiteral:
        return static_cast<const LiteralExpr&>(expr).value;
      case ExprKind::kList:
        return EvalList(static_cast<const ListExpr&>(expr), scope);
      case ExprKind::kDict:
        return EvalDict(static_cast<const DictExpr&>(expr), scope);
      case ExprKind::kName:
        return LookUp(static_cast<const NameExpr&>(expr).name, scope);
      case ExprKind::kAttribute: {
        const auto& attribute = static_cast<const AttributeExpr&>(expr);
        Value object = Eval(*attribute.object, scope);
        CheckDefined(object, *attribute.object);
        return Attribute(object, attribute.name);
      }
      case ExprKind::kSubscript: {
        const auto& subscript = static_cast<const SubscriptExpr&>(expr);
        Value object = Eval(*subscript.object, scope);
        CheckDefined(object, *subscript.object);
        return Subscript(object, Eval(*subscript.key, scope));
      }
      case ExprKind::kSlice:
        return EvalSlice(static_cast<const SliceExpr&>(expr), scope);
      case ExprKind::kCall:
        return EvalCall(static_cast<const CallExpr&>(expr), scope);
      case ExprKind::kFilter: {
        const auto& filter = static_cast<const FilterExpr&>(expr);
        Value operand = Eval(*filter.operand, scope);
        return ApplyFilter(filter.name, operand, EvalArguments(filter.args, scope), budget_);
      }
      case ExprKind::kTest: {
        const auto& test = static_cast<const TestExpr&>(expr);
        Value operand = Eval(*test.operand, scope);
        bool passed = ApplyTest(test.name, operand, EvalArguments(test.args, scope), budget_);
        return Value::Bool(passed != test.negated);
      }
      case ExprKind::kUnary:
        return EvalUnary(static_cast<const UnaryExpr&>(expr), scope);
      case ExprKind::kBinary: {
        const auto& binary = static_cast<const BinaryExpr&>(expr);
        Value left = Eval(*binary.left, scope);
        return ApplyBinary(binary.op, left, Eval(*binary.right, scope), budget_);
      }
      case ExprKind::kLogical: {
        const auto& logical = static_cast<const LogicalExpr&>(expr);
        Value left = Eval(*logical.left, scope);
        if (left.IsTruthy() != logical.is_and) return left;
        return Eval(*logical.right, scope);
      }
      case ExprKind::kCompare:
        return EvalCompare(static_cast<const CompareExpr&>(expr), scope);
      case ExprKind::kConditional: {
        const auto& conditional = static_cast<const ConditionalExpr&>(expr);
        if (Eval(*conditional.condition, scope).IsTruthy()) {
          return Eval(*conditional.if_true, scope);
        }
        return conditional.if_false ? Eval(*conditional.if_false, scope) : Value();
      }
    }
    throw RenderError("internal error: unknown expression");
  }

  Value LookUp(const std::string& name, const ScopePtr& scope) {
    if (const Value* value = scope->Find(name)) return *value;
    if (const Value* builtin = FindBuiltin(name)) return *builtin;
    return Value();
  }

  Value EvalList(const ListExpr& list, const ScopePtr& scope) {
    std::vector<Value> items;
    items.reserve(list.items.size());
    for (const ExprPtr& item : list.items) items.push_back(Eval(*item, scope));
    return list.is_tuple ? Value::Tuple(std::move(items)) : Value::List(std::move(items));
  }

  Value EvalDict(const DictExpr& dict, const ScopePtr& scope) {
    DictData entries;
    for (const auto& [key, value] : dict.entries) {
      Value k = Eval(*key, scope);
      entries.Set(std::move(k), Eval(*value, scope));
    }
    return Value::Dict(std::move(entries.entries));
  }

  Value EvalSlice(const SliceExpr& slice, const ScopePtr& scope) {
    Value object = Eval(*slice.object, scope);
    CheckDefined(object, *slice.object);
    auto part = [&](const ExprPtr& bound) { return bound ? Eval(*bound, scope) : Value(); };
    Value start = part(slice.start);
    Value stop = part(slice.stop);
    return Slice(object, start, stop, part(slice.step));
  }

  CallArgs EvalArguments(const Arguments& arguments, const ScopePtr& scope) {
    CallArgs args;
    args.positional.reserve(arguments.positional.size());
    for (const ExprPtr& argument : arguments.positional) {
      args.positional.push_back(Eval(*argument, scope));
    }
    for (const auto& [name, argument] : arguments.keyword) {
      args.keyword.emplace_back(name, Eval(*argument, scope));
    }
    return args;
  }

  // `caller`, when given, is passed as the keyword argument of that name.
  Value EvalCall(const CallExpr& call, const ScopePtr& scope, const Value* caller = nullptr) {
    Value callee = Eval(*call.callee, scope);
    if (!callee.is_function()) {
      std::string what = "this value";
      if (call.callee->kind == ExprKind::kName) {
        what = "'" + static_cast<const NameExpr&>(*call.callee).name + "'";
      } else if (call.callee->kind == ExprKind::kAttribute) {
        what = "'" + static_cast<const AttributeExpr&>(*call.callee).name + "'";
      }
      if (callee.is_undefined()) throw RenderError(what + " is undefined");
      throw RenderError(what + " is not callable (it is " + TypeName(callee) + ")");
    }
    CallArgs args = EvalArguments(call.args, scope);
    if (caller != nullptr) args.keyword.emplace_back("caller", *caller);
    return callee.AsFunction().Call(args, budget_);
  }

  Value EvalUnary(const UnaryExpr& unary, const ScopePtr& scope) {
    Value operand = Eval(*unary.operand, scope);
    switch (unary.op) {
      case UnaryOp::kNot:
        return Value::Bool(!operand.IsTruthy());
      case UnaryOp::kNegate:
        return Negate(operand);
      case UnaryOp::kPlus:
        return UnaryPlus(operand);
    }
    return operand;
  }

  // a < b < c holds when each comparison does, as in Python.
  Value EvalCompare(const CompareExpr& compare, const ScopePtr& scope) {
    Value left = Eval(*compare.first, scope);
    for (const auto& [op, operand] : compare.rest) {
      Value right = Eval(*operand, scope);
      if (!Compare(op, left, right, budget_)) return Value::Bool(false);
      left = std::move(right);
    }
    return Value::Bool(true);
  }

  RenderBudget& budget_;
  std::string* output_ = nullptr;
  int depth_ = 0;
  int macro_depth_ = 0;
};

}  // namespace

std::string RenderTemplate(const Template& tmpl,
                           std::vector<std::pair<std::string, Value>> variables,
                           RenderBudget& budget) {
  return Interpreter(budget).Run(tmpl, std::move(variables));
}

}  // namespace vllm::jinja
