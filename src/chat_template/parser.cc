// A recursive-descent parser over the lexer's tokens, one function per precedence level, as
// Jinja's own parser is laid out. Unknown filters and tests are syntax errors, as in Jinja, once
// the whole template has parsed; inside an `if` block or an `x if c else y` expression (but not
// in a loop, macro or block nested there) Jinja lets them pass, failing only when they are used.
#include "chat_template/parser.h"

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "chat_template/errors.h"
#include "chat_template/filters.h"
#include "chat_template/lexer.h"
#include "chat_template/limits.h"
#include "chat_template/predicates.h"

namespace vllm::jinja {
namespace {

std::string Describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd:
      return "end of template";
    case TokenKind::kText:
      return "template text";
    case TokenKind::kPrintBegin:
      return "'{{'";
    case TokenKind::kPrintEnd:
      return "'}}'";
    case TokenKind::kStatementBegin:
      return "'{%'";
    case TokenKind::kStatementEnd:
      return "'%}'";
    case TokenKind::kString:
      return "a string";
    default:
      return "'" + token.text + "'";
  }
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Template Parse() {
    Template result;
    result.body = ParseBody({});
    if (!unknown_names_.empty()) throw unknown_names_.front();
    return result;
  }

 private:
  // A block being parsed, for messages about where it should end.
  struct OpenBlock {
    std::string_view tag;
    int line;
    std::initializer_list<std::string_view> end_tags;
  };

  // Whether unknown filters and tests may pass (until used) in what is parsed while alive.
  class Leniency {
   public:
    Leniency(Parser& parser, bool lenient) : parser_(parser), saved_(parser.lenient_) {
      parser_.lenient_ = lenient;
    }
    ~Leniency() { parser_.lenient_ = saved_; }
    Leniency(const Leniency&) = delete;
    Leniency& operator=(const Leniency&) = delete;

   private:
    Parser& parser_;
    bool saved_;
  };

  // Counts nesting in the parser's own recursion.
  class DepthGuard {
   public:
    DepthGuard(Parser& parser, int line) : parser_(parser) {
      if (++parser_.depth_ > kMaxSyntaxDepth) parser_.Fail("template nested too deeply", line);
    }
    ~DepthGuard() { --parser_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& parser_;
  };

  [[noreturn]] void Fail(const std::string& message, int line) { throw SyntaxError(message, line); }
  [[noreturn]] void Unexpected(const std::string& expected) {
    Fail("unexpected " + Describe(Peek()) + ", expected " + expected, Peek().line);
  }

  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(index_ + ahead, tokens_.size() - 1)];
  }
  const Token& Next() {
    const Token& token = Peek();
    if (index_ < tokens_.size() - 1) ++index_;
    return token;
  }
  bool IsOperator(std::string_view op, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kOperator && Peek(ahead).text == op;
  }
  bool IsName(std::string_view name, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kName && Peek(ahead).text == name;
  }
  bool SkipOperator(std::string_view op) {
    if (!IsOperator(op)) return false;
    Next();
    return true;
  }
  bool SkipName(std::string_view name) {
    if (!IsName(name)) return false;
    Next();
    return true;
  }
  void ExpectOperator(std::string_view op) {
    if (!SkipOperator(op)) Unexpected("'" + std::string(op) + "'");
  }
  std::string ExpectName() {
    if (Peek().kind != TokenKind::kName) Unexpected("a name");
    return Next().text;
  }
  void ExpectName(std::string_view name) {
    if (!SkipName(name)) Unexpected("'" + std::string(name) + "'");
  }
  void ExpectStatementEnd() {
    if (Peek().kind != TokenKind::kStatementEnd) Unexpected("'%}'");
    Next();
  }

  // Makes `child` a child of `parent`, keeping parent.depth and its limit.
  ExprPtr Child(Expr& parent, ExprPtr child) {
    if (child) {
      parent.depth = std::max(parent.depth, child->depth + 1);
      if (parent.depth > kMaxSyntaxDepth) Fail("expression nested too deeply", parent.line);
    }
    return child;
  }

  // ---- Statements ----

  // Statements up to `{% <one of end_tags>`, which is left for the caller to read.
  Body ParseBody(std::initializer_list<std::string_view> end_tags) {
    DepthGuard guard(*this, Peek().line);
    Body body;
    while (true) {
      const Token& token = Peek();
      switch (token.kind) {
        case TokenKind::kEnd:
          if (!open_blocks_.empty()) {
            const OpenBlock& block = open_blocks_.back();
            Fail("unexpected end of template: '" + std::string(block.tag) + "' from line " +
                     std::to_string(block.line) + " is not closed (expected " +
                     ExpectedTags(block) + ")",
                 token.line);
          }
          return body;
        case TokenKind::kText:
          body.push_back(std::make_unique<TextStmt>(token.line, token.text));
          Next();
          break;
        case TokenKind::kPrintBegin: {
          auto print = std::make_unique<PrintStmt>(Next().line);
          print->value = ParseTuple(true);
          if (Peek().kind != TokenKind::kPrintEnd) Unexpected("'}}'");
          Next();
          body.push_back(std::move(print));
          break;
        }
        case TokenKind::kStatementBegin:
          if (Peek(1).kind == TokenKind::kName &&
              std::find(end_tags.begin(), end_tags.end(), Peek(1).text) != end_tags.end()) {
            return body;
          }
          Next();
          ParseStatement(body);
          break;
        default:
          Unexpected("template text or a tag");
      }
    }
  }

  std::string ExpectedTags(const OpenBlock& block) const {
    std::string out;
    for (std::string_view tag : block.end_tags) {
      if (!out.empty()) out += " or ";
      out += "'" + std::string(tag) + "'";
    }
    return out;
  }

  // The statements of a block up to one of its end tags; returns the end tag, then consumed.
  // Unknown filters and tests pass inside when `lenient` (the block of an `if`).
  std::string ParseBlock(std::string_view tag, int line,
                         std::initializer_list<std::string_view> end_tags, Body& body,
                         bool lenient = false) {
    Leniency leniency(*this, lenient);
    open_blocks_.push_back(OpenBlock{tag, line, end_tags});
    body = ParseBody(end_tags);
    open_blocks_.pop_back();
    Next();  // {%
    return Next().text;
  }

  void ParseStatement(Body& body) {
    const Token& keyword = Peek();
    if (keyword.kind != TokenKind::kName) Unexpected("a statement keyword");
    std::string name = keyword.text;
    int line = keyword.line;
    Next();
    if (name == "if") {
      body.push_back(ParseIf(line));
    } else if (name == "for") {
      body.push_back(ParseFor(line));
    } else if (name == "set") {
      body.push_back(ParseSet(line));
    } else if (name == "macro") {
      body.push_back(ParseMacro(line));
    } else if (name == "call") {
      body.push_back(ParseCallBlock(line));
    } else if (name == "filter") {
      body.push_back(ParseFilterBlock(line));
    } else if (name == "with") {
      body.push_back(ParseWith(line));
    } else if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) Fail("'" + name + "' outside a for loop", line);
      ExpectStatementEnd();
      body.push_back(
          std::make_unique<Stmt>(name == "break" ? StmtKind::kBreak : StmtKind::kContinue, line));
    } else if (name == "generation") {
      // transformers' {% generation %} marks assistant text for masks; the text renders as is.
      ExpectStatementEnd();
      Body inner;
      ParseBlock("generation", line, {"endgeneration"}, inner);
      ExpectStatementEnd();
      for (auto& statement : inner) body.push_back(std::move(statement));
    } else if (!open_blocks_.empty()) {
      Fail("unexpected tag '" + name + "' (expected " + ExpectedTags(open_blocks_.back()) +
               " to close '" + std::string(open_blocks_.back().tag) + "' from line " +
               std::to_string(open_blocks_.back().line) + ")",
           line);
    } else {
      Fail("unknown or unsupported tag '" + name + "'", line);
    }
  }

  StmtPtr ParseIf(int line) {
    auto statement = std::make_unique<IfStmt>(line);
    Leniency leniency(*this, true);
    ExprPtr condition = ParseExpression();
    ExpectStatementEnd();
    while (true) {
      Body body;
      std::string end = ParseBlock("if", line, {"elif", "else", "endif"}, body, true);
      statement->branches.emplace_back(std::move(condition), std::move(body));
      if (end == "elif") {
        condition = ParseExpression();
        ExpectStatementEnd();
        continue;
      }
      ExpectStatementEnd();
      if (end == "else") {
        ParseBlock("if", line, {"endif"}, statement->otherwise, true);
        ExpectStatementEnd();
      }
      return statement;
    }
  }

  StmtPtr ParseFor(int line) {
    auto statement = std::make_unique<ForStmt>(line);
    bool parenthesized = SkipOperator("(");
    do {
      statement->targets.push_back(ExpectName());
    } while (SkipOperator(","));
    if (parenthesized) ExpectOperator(")");
    ExpectName("in");
    statement->iterable = ParseTuple(false);
    if (SkipName("if")) {
      Leniency leniency(*this, false);
      statement->condition = ParseExpression();
    }
    if (IsName("recursive")) Fail("recursive loops are not supported", Peek().line);
    ExpectStatementEnd();
    ++loop_depth_;
    std::string end = ParseBlock("for", line, {"else", "endfor"}, statement->body);
    --loop_depth_;
    ExpectStatementEnd();
    if (end == "else") {
      ParseBlock("for", line, {"endfor"}, statement->otherwise);
      ExpectStatementEnd();
    }
    return statement;
  }

  AssignTarget ParseAssignTarget() {
    AssignTarget target;
    target.names.push_back(ExpectName());
    if (SkipOperator(".")) {
      target.attribute = ExpectName();
      return target;
    }
    while (SkipOperator(",")) target.names.push_back(ExpectName());
    return target;
  }

  StmtPtr ParseSet(int line) {
    AssignTarget target = ParseAssignTarget();
    if (SkipOperator("=")) {
      auto statement = std::make_unique<SetStmt>(line);
      statement->target = std::move(target);
      statement->value = ParseTuple(true);
      ExpectStatementEnd();
      return statement;
    }
    if (target.names.size() > 1) Unexpected("'='");
    ExpectStatementEnd();
    auto statement = std::make_unique<SetBlockStmt>(line);
    statement->target = std::move(target);
    ParseBlock("set", line, {"endset"}, statement->body);
    ExpectStatementEnd();
    return statement;
  }

  // (a, b=default, ...) of a macro or a call block.
  void ParseSignature(MacroStmt& macro) {
    Leniency leniency(*this, false);
    ExpectOperator("(");
    while (!IsOperator(")")) {
      if (!macro.parameters.empty()) ExpectOperator(",");
      MacroParameter parameter{ExpectName(), nullptr};
      if (SkipOperator("=")) {
        parameter.default_value = ParseExpression();
      } else if (!macro.parameters.empty() && macro.parameters.back().default_value) {
        Fail("non-default argument follows default argument", Peek().line);
      }
      macro.parameters.push_back(std::move(parameter));
    }
    Next();  // )
  }

  // The body of a macro or call block, up to `end_tag`.
  void ParseMacroBody(MacroStmt& macro, std::string_view tag, std::string_view end_tag) {
    int saved_loop_depth = loop_depth_;
    loop_depth_ = 0;  // break and continue do not reach loops outside the macro
    ParseBlock(tag, macro.line, {end_tag}, macro.body);
    loop_depth_ = saved_loop_depth;
    ExpectStatementEnd();
  }

  StmtPtr ParseMacro(int line) {
    auto statement = std::make_unique<MacroStmt>(line, ExpectName());
    ParseSignature(*statement);
    ExpectStatementEnd();
    ParseMacroBody(*statement, "macro", "endmacro");
    return statement;
  }

  StmtPtr ParseCallBlock(int line) {
    auto caller = std::make_unique<MacroStmt>(line, "caller");
    if (IsOperator("(")) ParseSignature(*caller);
    ExprPtr call = ParseExpression();
    if (call->kind != ExprKind::kCall) Fail("expected a macro call after 'call'", line);
    ExpectStatementEnd();
    ParseMacroBody(*caller, "call", "endcall");
    auto statement = std::make_unique<CallBlockStmt>(line, std::move(caller));
    statement->call = std::move(call);
    return statement;
  }

  StmtPtr ParseFilterBlock(int line) {
    auto statement = std::make_unique<FilterBlockStmt>(line);
    Leniency leniency(*this, false);
    do {
      FilterCall filter{ExpectName(), {}};
      CheckKnown(IsFilter(filter.name), "filter", filter.name, line);
      if (IsOperator("(")) {
        Expr owner(ExprKind::kFilter, line);  // bounds the nesting of the arguments
        filter.args = ParseArguments(owner);
      }
      statement->filters.push_back(std::move(filter));
    } while (SkipOperator("|"));
    ExpectStatementEnd();
    ParseBlock("filter", line, {"endfilter"}, statement->body);
    ExpectStatementEnd();
    return statement;
  }

  StmtPtr ParseWith(int line) {
    auto statement = std::make_unique<WithStmt>(line);
    while (Peek().kind != TokenKind::kStatementEnd) {
      if (!statement->assignments.empty()) ExpectOperator(",");
      std::string name = ExpectName();
      ExpectOperator("=");
      statement->assignments.emplace_back(std::move(name), ParseExpression());
    }
    ExpectStatementEnd();
    ParseBlock("with", line, {"endwith"}, statement->body);
    ExpectStatementEnd();
    return statement;
  }

  // ---- Expressions ----

  bool IsTupleEnd() const {
    TokenKind kind = Peek().kind;
    return kind == TokenKind::kPrintEnd || kind == TokenKind::kStatementEnd || IsOperator(")");
  }

  // `a, b` makes a tuple where a whole expression is expected ({{ }}, set, for ... in).
  ExprPtr ParseTuple(bool with_conditional) {
    int line = Peek().line;
    auto parse_item = [&] { return with_conditional ? ParseExpression() : ParseOr(); };
    ExprPtr first = parse_item();
    if (!IsOperator(",")) return first;
    auto tuple = std::make_unique<ListExpr>(line, true);
    tuple->items.push_back(Child(*tuple, std::move(first)));
    while (SkipOperator(",")) {
      if (IsTupleEnd()) break;
      tuple->items.push_back(Child(*tuple, parse_item()));
    }
    return tuple;
  }

  // Notes an unknown filter or test, an error once the template has parsed unless it is lenient
  // here (or becomes so: see ParseExpression).
  void CheckKnown(bool known, std::string_view kind, const std::string& name, int line) {
    if (known || lenient_) return;
    unknown_names_.emplace_back("unknown " + std::string(kind) + " '" + name + "'", line);
  }

  ExprPtr ParseExpression() {
    size_t unknown_before = unknown_names_.size();
    ExprPtr expr = ParseOr();
    while (IsName("if")) {
      // A conditional expression is lenient as a whole, the part read before `if` included.
      unknown_names_.erase(unknown_names_.begin() + static_cast<std::ptrdiff_t>(unknown_before),
                           unknown_names_.end());
      Leniency leniency(*this, true);
      auto conditional = std::make_unique<ConditionalExpr>(Next().line);
      conditional->if_true = Child(*conditional, std::move(expr));
      conditional->condition = Child(*conditional, ParseOr());
      if (SkipName("else")) conditional->if_false = Child(*conditional, ParseExpression());
      expr = std::move(conditional);
    }
    return expr;
  }

  ExprPtr ParseOr() {
    ExprPtr left = ParseAnd();
    while (IsName("or")) {
      auto node = std::make_unique<LogicalExpr>(Next().line, false);
      node->left = Child(*node, std::move(left));
      node->right = Child(*node, ParseAnd());
      left = std::move(node);
    }
    return left;
  }

  ExprPtr ParseAnd() {
    ExprPtr left = ParseNot();
    while (IsName("and")) {
      auto node = std::make_unique<LogicalExpr>(Next().line, true);
      node->left = Child(*node, std::move(left));
      node->right = Child(*node, ParseNot());
      left = std::move(node);
    }
    return left;
  }

  ExprPtr ParseNot() {
    if (!IsName("not")) return ParseCompare();
    DepthGuard guard(*this, Peek().line);
    auto node = std::make_unique<UnaryExpr>(Next().line, UnaryOp::kNot);
    node->operand = Child(*node, ParseNot());
    return node;
  }

  // The comparison operator at the current token, and how many tokens it takes.
  std::optional<std::pair<CompareOp, int>> PeekCompareOperator() const {
    static constexpr std::pair<std::string_view, CompareOp> kSymbols[] = {
        {"==", CompareOp::kEqual},  {"!=", CompareOp::kNotEqual},
        {"<", CompareOp::kLess},    {"<=", CompareOp::kLessEqual},
        {">", CompareOp::kGreater}, {">=", CompareOp::kGreaterEqual},
    };
    for (const auto& [symbol, op] : kSymbols) {
      if (IsOperator(symbol)) return std::pair{op, 1};
    }
    if (IsName("in")) return std::pair{CompareOp::kIn, 1};
    if (IsName("not") && IsName("in", 1)) return std::pair{CompareOp::kNotIn, 2};
    return std::nullopt;
  }

  ExprPtr ParseCompare() {
    ExprPtr first = ParseAdditive();
    if (!PeekCompareOperator()) return first;
    auto compare = std::make_unique<CompareExpr>(Peek().line);
    compare->first = Child(*compare, std::move(first));
    while (auto op = PeekCompareOperator()) {
      for (int i = 0; i < op->second; ++i) Next();
      compare->rest.emplace_back(op->first, Child(*compare, ParseAdditive()));
    }
    return compare;
  }

  // One left-associative level of binary operators.
  template <typename Operand>
  ExprPtr ParseBinaryLevel(std::initializer_list<std::pair<std::string_view, BinaryOp>> ops,
                           Operand operand) {
    ExprPtr left = operand();
    while (true) {
      auto found = std::find_if(ops.begin(), ops.end(),
                                [&](const auto& entry) { return IsOperator(entry.first); });
      if (found == ops.end()) return left;
      auto node = std::make_unique<BinaryExpr>(Next().line, found->second);
      node->left = Child(*node, std::move(left));
      node->right = Child(*node, operand());
      left = std::move(node);
    }
  }

  ExprPtr ParseAdditive() {
    return ParseBinaryLevel({{"+", BinaryOp::kAdd}, {"-", BinaryOp::kSubtract}},
                            [this] { return ParseConcat(); });
  }

  ExprPtr ParseConcat() {
    return ParseBinaryLevel({{"~", BinaryOp::kConcat}}, [this] { return ParseMultiplicative(); });
  }

  ExprPtr ParseMultiplicative() {
    return ParseBinaryLevel({{"*", BinaryOp::kMultiply},
                             {"/", BinaryOp::kDivide},
                             {"//", BinaryOp::kFloorDivide},
                             {"%", BinaryOp::kModulo}},
                            [this] { return ParsePower(); });
  }

  ExprPtr ParsePower() {
    return ParseBinaryLevel({{"**", BinaryOp::kPower}}, [this] { return ParseUnary(true); });
  }

  ExprPtr ParseUnary(bool with_filters) {
    DepthGuard guard(*this, Peek().line);
    ExprPtr node;
    if (IsOperator("-") || IsOperator("+")) {
      auto unary = std::make_unique<UnaryExpr>(
          Peek().line, Peek().text == "-" ? UnaryOp::kNegate : UnaryOp::kPlus);
      Next();
      unary->operand = Child(*unary, ParseUnary(false));
      node = std::move(unary);
    } else {
      node = ParsePrimary();
    }
    node = ParsePostfix(std::move(node));
    if (with_filters) node = ParseFiltersAndTests(std::move(node));
    return node;
  }

  ExprPtr ParsePrimary() {
    const Token& token = Peek();
    int line = token.line;
    switch (token.kind) {
      case TokenKind::kName: {
        std::string name = Next().text;
        if (name == "true" || name == "True")
          return std::make_unique<LiteralExpr>(line, Value::Bool(true));
        if (name == "false" || name == "False")
          return std::make_unique<LiteralExpr>(line, Value::Bool(false));
        if (name == "none" || name == "None")
          return std::make_unique<LiteralExpr>(line, Value::None());
        return std::make_unique<NameExpr>(line, std::move(name));
      }
      case TokenKind::kString: {
        std::string text;
        while (Peek().kind == TokenKind::kString) text += Next().text;  // 'a' 'b' is 'ab'
        return std::make_unique<LiteralExpr>(line, Value::String(std::move(text)));
      }
      case TokenKind::kInteger:
        return std::make_unique<LiteralExpr>(line, Value::Int(Next().int_value));
      case TokenKind::kFloat:
        return std::make_unique<LiteralExpr>(line, Value::Float(Next().float_value));
      default:
        break;
    }
    if (SkipOperator("(")) return ParseParenthesized(line);
    if (SkipOperator("[")) {
      auto list = std::make_unique<ListExpr>(line, false);
      while (!SkipOperator("]")) {
        if (!list->items.empty()) {
          ExpectOperator(",");
          if (SkipOperator("]")) break;
        }
        list->items.push_back(Child(*list, ParseExpression()));
      }
      return list;
    }
    if (SkipOperator("{")) {
      auto dict = std::make_unique<DictExpr>(line);
      while (!SkipOperator("}")) {
        if (!dict->entries.empty()) {
          ExpectOperator(",");
          if (SkipOperator("}")) break;
        }
        ExprPtr key = Child(*dict, ParseExpression());
        ExpectOperator(":");
        dict->entries.emplace_back(std::move(key), Child(*dict, ParseExpression()));
      }
      return dict;
    }
    Unexpected("an expression");
  }

  // After "(": `()` is an empty tuple, `(x)` is x, `(x,)` and `(x, y)` are tuples.
  ExprPtr ParseParenthesized(int line) {
    auto tuple = std::make_unique<ListExpr>(line, true);
    bool saw_comma = false;
    while (!SkipOperator(")")) {
      if (!tuple->items.empty()) {
        ExpectOperator(",");
        saw_comma = true;
        if (SkipOperator(")")) break;
      }
      tuple->items.push_back(Child(*tuple, ParseExpression()));
    }
    if (tuple->items.size() == 1 && !saw_comma) return std::move(tuple->items.front());
    return tuple;
  }

  ExprPtr ParsePostfix(ExprPtr node) {
    while (true) {
      if (IsOperator(".")) {
        int line = Next().line;
        if (Peek().kind == TokenKind::kInteger) {  // items.0 is items[0]
          auto subscript = std::make_unique<SubscriptExpr>(line);
          subscript->object = Child(*subscript, std::move(node));
          subscript->key =
              Child(*subscript, std::make_unique<LiteralExpr>(line, Value::Int(Next().int_value)));
          node = std::move(subscript);
        } else {
          auto attribute = std::make_unique<AttributeExpr>(line, ExpectName());
          attribute->object = Child(*attribute, std::move(node));
          node = std::move(attribute);
        }
      } else if (IsOperator("[")) {
        node = ParseSubscript(std::move(node));
      } else if (IsOperator("(")) {
        node = ParseCall(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr ParseSubscript(ExprPtr object) {
    int line = Next().line;  // [
    ExprPtr start;
    if (!IsOperator(":")) {
      start = ParseExpression();
      if (SkipOperator("]")) {
        auto subscript = std::make_unique<SubscriptExpr>(line);
        subscript->object = Child(*subscript, std::move(object));
        subscript->key = Child(*subscript, std::move(start));
        return subscript;
      }
    }
    ExpectOperator(":");
    auto slice = std::make_unique<SliceExpr>(line);
    slice->object = Child(*slice, std::move(object));
    slice->start = Child(*slice, std::move(start));
    if (!IsOperator(":") && !IsOperator("]")) slice->stop = Child(*slice, ParseExpression());
    if (SkipOperator(":") && !IsOperator("]")) slice->step = Child(*slice, ParseExpression());
    ExpectOperator("]");
    return slice;
  }

  // After the callee: (a, b, key=c).
  Arguments ParseArguments(Expr& owner) {
    ExpectOperator("(");
    Arguments args;
    bool first = true;
    while (!SkipOperator(")")) {
      if (!first) {
        ExpectOperator(",");
        if (SkipOperator(")")) break;
      }
      first = false;
      if (Peek().kind == TokenKind::kName && IsOperator("=", 1)) {
        std::string name = Next().text;
        Next();  // =
        args.keyword.emplace_back(std::move(name), Child(owner, ParseExpression()));
      } else {
        if (!args.keyword.empty()) Fail("positional argument after keyword argument", Peek().line);
        args.positional.push_back(Child(owner, ParseExpression()));
      }
    }
    return args;
  }

  ExprPtr ParseCall(ExprPtr callee) {
    auto call = std::make_unique<CallExpr>(Peek().line);
    call->callee = Child(*call, std::move(callee));
    call->args = ParseArguments(*call);
    return call;
  }

  ExprPtr ParseFiltersAndTests(ExprPtr node) {
    while (true) {
      if (IsOperator("|")) {
        int line = Next().line;
        auto filter = std::make_unique<FilterExpr>(line, ExpectName());
        CheckKnown(IsFilter(filter->name), "filter", filter->name, line);
        filter->operand = Child(*filter, std::move(node));
        if (IsOperator("(")) filter->args = ParseArguments(*filter);
        node = std::move(filter);
      } else if (IsName("is")) {
        int line = Next().line;
        bool negated = SkipName("not");
        auto test = std::make_unique<TestExpr>(line, ExpectName(), negated);
        CheckKnown(IsTest(test->name), "test", test->name, line);
        test->operand = Child(*test, std::move(node));
        if (IsOperator("(")) {
          test->args = ParseArguments(*test);
        } else if (StartsTestArgument()) {  // x is divisibleby 3
          test->args.positional.push_back(Child(*test, ParsePostfix(ParsePrimary())));
        }
        node = std::move(test);
      } else if (IsOperator("(")) {
        node = ParseCall(std::move(node));
      } else {
        return node;
      }
    }
  }

  // Whether a test's single argument follows without parentheses, as Jinja decides it.
  bool StartsTestArgument() const {
    const Token& token = Peek();
    switch (token.kind) {
      case TokenKind::kName:
        return token.text != "else" && token.text != "or" && token.text != "and" &&
               token.text != "if" && token.text != "is" && token.text != "in" &&
               token.text != "not";
      case TokenKind::kString:
      case TokenKind::kInteger:
      case TokenKind::kFloat:
        return true;
      default:
        return IsOperator("[") || IsOperator("{");
    }
  }

  std::vector<Token> tokens_;
  size_t index_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  std::vector<OpenBlock> open_blocks_;
  bool lenient_ = false;
  std::vector<SyntaxError> unknown_names_;
};

}  // namespace

Template ParseTemplate(std::string_view source) { return Parser(Tokenize(source)).Parse(); }

}  // namespace vllm::jinja
