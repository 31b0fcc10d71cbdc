// The syntax tree of a parsed template: expression nodes, statement nodes and the template.
// Each node remembers its source line for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat_template/operators.h"
#include "chat_template/value.h"

namespace vllm::jinja {

enum class ExprKind {
  kLiteral,
  kList,
  kDict,
  kName,
  kAttribute,
  kSubscript,
  kSlice,
  kCall,
  kFilter,
  kTest,
  kUnary,
  kBinary,
  kLogical,
  kCompare,
  kConditional,
};

struct Expr {
  Expr(ExprKind expr_kind, int source_line) : kind(expr_kind), line(source_line) {}
  virtual ~Expr() = default;
  ExprKind kind;
  int line;
  int depth = 1;  // nodes on the longest path down from here, this one included
};
using ExprPtr = std::unique_ptr<Expr>;

// The arguments written in a call, filter or test.
struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct LiteralExpr : Expr {
  LiteralExpr(int l, Value v) : Expr(ExprKind::kLiteral, l), value(std::move(v)) {}
  Value value;  // never a list or dict, which are made anew each time
};

struct ListExpr : Expr {  // [a, b] or (a, b)
  ListExpr(int l, bool tuple) : Expr(ExprKind::kList, l), is_tuple(tuple) {}
  std::vector<ExprPtr> items;
  bool is_tuple;
};

struct DictExpr : Expr {  // {k: v}
  explicit DictExpr(int l) : Expr(ExprKind::kDict, l) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> entries;
};

struct NameExpr : Expr {
  NameExpr(int l, std::string n) : Expr(ExprKind::kName, l), name(std::move(n)) {}
  std::string name;
};

struct AttributeExpr : Expr {  // object.name
  AttributeExpr(int l, std::string n) : Expr(ExprKind::kAttribute, l), name(std::move(n)) {}
  ExprPtr object;
  std::string name;
};

struct SubscriptExpr : Expr {  // object[key]
  explicit SubscriptExpr(int l) : Expr(ExprKind::kSubscript, l) {}
  ExprPtr object;
  ExprPtr key;
};

struct SliceExpr : Expr {  // object[start:stop:step], each part optional (null)
  explicit SliceExpr(int l) : Expr(ExprKind::kSlice, l) {}
  ExprPtr object;
  ExprPtr start;
  ExprPtr stop;
  ExprPtr step;
};

struct CallExpr : Expr {  // callee(args)
  explicit CallExpr(int l) : Expr(ExprKind::kCall, l) {}
  ExprPtr callee;
  Arguments args;
};

struct FilterExpr : Expr {  // operand | name(args)
  FilterExpr(int l, std::string n) : Expr(ExprKind::kFilter, l), name(std::move(n)) {}
  ExprPtr operand;
  std::string name;
  Arguments args;
};

struct TestExpr : Expr {  // operand is [not] name(args)
  TestExpr(int l, std::string n, bool negate)
      : Expr(ExprKind::kTest, l), name(std::move(n)), negated(negate) {}
  ExprPtr operand;
  std::string name;
  Arguments args;
  bool negated;
};

enum class UnaryOp { kNot, kNegate, kPlus };

struct UnaryExpr : Expr {
  UnaryExpr(int l, UnaryOp o) : Expr(ExprKind::kUnary, l), op(o) {}
  UnaryOp op;
  ExprPtr operand;
};

struct BinaryExpr : Expr {  // arithmetic and ~
  BinaryExpr(int l, BinaryOp o) : Expr(ExprKind::kBinary, l), op(o) {}
  BinaryOp op;
  ExprPtr left;
  ExprPtr right;
};

struct LogicalExpr : Expr {  // `and` / `or`: the deciding operand, as in Python
  LogicalExpr(int l, bool and_op) : Expr(ExprKind::kLogical, l), is_and(and_op) {}
  bool is_and;
  ExprPtr left;
  ExprPtr right;
};

struct CompareExpr : Expr {  // a < b <= c: chained as in Python
  explicit CompareExpr(int l) : Expr(ExprKind::kCompare, l) {}
  ExprPtr first;
  std::vector<std::pair<CompareOp, ExprPtr>> rest;
};

struct ConditionalExpr : Expr {  // if_true if condition else if_false (null: undefined)
  explicit ConditionalExpr(int l) : Expr(ExprKind::kConditional, l) {}
  ExprPtr condition;
  ExprPtr if_true;
  ExprPtr if_false;
};

enum class StmtKind {
  kText,
  kPrint,
  kIf,
  kFor,
  kSet,
  kSetBlock,
  kMacro,
  kCallBlock,
  kFilterBlock,
  kWith,
  kBreak,
  kContinue
};

struct Stmt {
  Stmt(StmtKind stmt_kind, int source_line) : kind(stmt_kind), line(source_line) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  int line;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct TextStmt : Stmt {
  TextStmt(int l, std::string t) : Stmt(StmtKind::kText, l), text(std::move(t)) {}
  std::string text;
};

struct PrintStmt : Stmt {  // {{ value }}
  explicit PrintStmt(int l) : Stmt(StmtKind::kPrint, l) {}
  ExprPtr value;
};

struct IfStmt : Stmt {  // if / elif branches, then else
  explicit IfStmt(int l) : Stmt(StmtKind::kIf, l) {}
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body otherwise;
};

struct ForStmt : Stmt {  // for targets in iterable [if condition] ... [else ...]
  explicit ForStmt(int l) : Stmt(StmtKind::kFor, l) {}
  std::vector<std::string> targets;  // more than one: each item is unpacked
  ExprPtr iterable;
  ExprPtr condition;  // null: every item
  Body body;
  Body otherwise;  // when no item was visited
};

// What `set` assigns to: names (several unpack a sequence) or one namespace attribute.
struct AssignTarget {
  std::vector<std::string> names;
  std::string attribute;  // set: names[0].attribute, which must be a namespace
};

struct SetStmt : Stmt {  // set target = value
  explicit SetStmt(int l) : Stmt(StmtKind::kSet, l) {}
  AssignTarget target;
  ExprPtr value;
};

struct SetBlockStmt : Stmt {  // set target %}body{% endset
  explicit SetBlockStmt(int l) : Stmt(StmtKind::kSetBlock, l) {}
  AssignTarget target;
  Body body;
};

struct MacroParameter {
  std::string name;
  ExprPtr default_value;  // null: required (undefined when left out, as in Jinja)
};

struct MacroStmt : Stmt {
  MacroStmt(int l, std::string n) : Stmt(StmtKind::kMacro, l), name(std::move(n)) {}
  std::string name;
  std::vector<MacroParameter> parameters;
  Body body;
};

// call [(parameters)] macro(args) %}body{% endcall: calls the macro with `caller`, a macro
// named "caller" whose body is the block's.
struct CallBlockStmt : Stmt {
  CallBlockStmt(int l, std::unique_ptr<MacroStmt> c)
      : Stmt(StmtKind::kCallBlock, l), caller(std::move(c)) {}
  ExprPtr call;  // a CallExpr
  std::unique_ptr<MacroStmt> caller;
};

// One filter of a filter block: `name(args)`.
struct FilterCall {
  std::string name;
  Arguments args;
};

struct FilterBlockStmt : Stmt {  // filter f(args) | g %}body{% endfilter: g(f(body, args))
  explicit FilterBlockStmt(int l) : Stmt(StmtKind::kFilterBlock, l) {}
  std::vector<FilterCall> filters;
  Body body;
};

struct WithStmt : Stmt {  // with a = x, b = y %}body{% endwith: the names are set only inside
  explicit WithStmt(int l) : Stmt(StmtKind::kWith, l) {}
  std::vector<std::pair<std::string, ExprPtr>> assignments;
  Body body;
};

struct Template {
  Body body;
};

}  // namespace vllm::jinja
