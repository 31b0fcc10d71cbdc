// Unit tests of the chat template engine: whitespace control, expressions, statements, filters,
// tests, methods, globals, errors and limits. Expected outputs are what Python Jinja2 3.1 renders
// when set up as transformers sets it up (trim_blocks, lstrip_blocks, its tojson filter).
#include "chat_template/chat_template.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {
// The largest block asked of operator new since a test last reset it, to check that a limit stops
// a rendering before it allocates. The replaced operators cover the whole program; the array and
// aligned ones keep their standard (or sanitizer) pairs.
std::atomic<size_t> largest_allocation{0};
}  // namespace

void* operator new(size_t size, const std::nothrow_t&) noexcept {
  size_t largest = largest_allocation.load(std::memory_order_relaxed);
  while (size > largest && !largest_allocation.compare_exchange_weak(largest, size)) {
  }
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new(size_t size) {
  if (void* block = operator new(size, std::nothrow)) return block;
  throw std::bad_alloc();
}
// GCC takes the free() of a block from this operator new for a mismatch once it inlines them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* block) noexcept { std::free(block); }
void operator delete(void* block, size_t) noexcept { std::free(block); }
void operator delete(void* block, const std::nothrow_t&) noexcept { std::free(block); }
#pragma GCC diagnostic pop

namespace vllm {
namespace {

using nlohmann::ordered_json;

// `source` parsed; a parse error fails the test and gives nullopt.
std::optional<ChatTemplate> ParseOrFail(std::string_view source) {
  Expected<ChatTemplate> parsed = ChatTemplate::Parse(source);
  if (!parsed.ok()) {
    ADD_FAILURE() << "parse error: " << parsed.error() << "\n  template: " << source;
    return std::nullopt;
  }
  return std::move(*parsed);
}

// The rendering of `source`; a parse or render error fails the test and gives "".
std::string Render(std::string_view source,
                   const ordered_json& variables = ordered_json::object()) {
  std::optional<ChatTemplate> parsed = ParseOrFail(source);
  if (!parsed) return "";
  Expected<std::string> rendered = parsed->Render(variables);
  if (!rendered.ok()) {
    ADD_FAILURE() << "render error: " << rendered.error() << "\n  template: " << source;
    return "";
  }
  return *rendered;
}

// The error of rendering `source`, which must parse; a rendering that succeeds fails the test.
std::string RenderError(std::string_view source,
                        const ordered_json& variables = ordered_json::object()) {
  std::optional<ChatTemplate> parsed = ParseOrFail(source);
  if (!parsed) return "";
  Expected<std::string> rendered = parsed->Render(variables);
  if (rendered.ok()) {
    ADD_FAILURE() << "rendered without error: " << *rendered << "\n  template: " << source;
    return "";
  }
  return rendered.error();
}

// The rendering of `source`, which must parse, with no variables and `limits`.
Expected<std::string> RenderWithin(std::string_view source,
                                   const ChatTemplate::RenderLimits& limits) {
  Expected<ChatTemplate> parsed = ChatTemplate::Parse(source);
  if (!parsed.ok()) return Error{"parse error: " + parsed.error()};
  return parsed->Render(ordered_json::object(), limits);
}

// The error of parsing `source`; a parse that succeeds fails the test.
std::string ParseError(std::string_view source) {
  Expected<ChatTemplate> parsed = ChatTemplate::Parse(source);
  if (parsed.ok()) {
    ADD_FAILURE() << "parsed without error: " << source;
    return "";
  }
  return parsed.error();
}

struct Case {
  std::string source;
  std::string expected;
};

void ExpectRenders(const std::vector<Case>& cases,
                   const ordered_json& variables = ordered_json::object()) {
  for (const Case& c : cases) EXPECT_EQ(Render(c.source, variables), c.expected) << c.source;
}

// ---- Whitespace control ----

TEST(ChatTemplateWhitespace, TrimBlocksDropsTheNewlineAfterABlockTag) {
  ExpectRenders({
      {"{% if true %}\nx\n{% endif %}\ny", "x\ny"},
      {"line1\n{% for i in [1, 2] %}\n  {{ i }}\n{% endfor %}\nend", "line1\n  1\n  2\nend"},
      {"a{# note #}\nb", "ab"},
      {"{{ 'v' }}\nb", "v\nb"},  // not after {{ }}
  });
}

TEST(ChatTemplateWhitespace, LstripBlocksDropsIndentBeforeBlockTagsAndComments) {
  ExpectRenders({
      {"a\n  {% if true %}\n    x\n  {% endif %}\nb", "a\n    x\nb"},
      {"a\n  {{ 'v' }}\n  {# c #}\nb", "a\n  v\nb"},
      {"   {% if true %}x{% endif %}", "x"},
      {"a  {% if true %}x{% endif %}  b", "a  x  b"},  // not at the start of a line
      {"{% if true %}\n   {% if true %}x{% endif %}\n{% endif %}", "x"},
      {"{{ 'a' }}\n   {% if true %}x{% endif %}", "a\nx"},
      {"{{ 'a' }}   {% if true %}x{% endif %}", "a   x"},
  });
}

TEST(ChatTemplateWhitespace, MinusStripsAndPlusKeeps) {
  ExpectRenders({
      {"a {%- if true -%} b {%- endif -%} c", "abc"},
      {"a\n{{- 'v' -}}\n  b", "avb"},
      {"a \n {#- c -#} \n b", "ab"},
      {"  {%+ if true %}y{% endif +%}\nz", "  y\nz"},
      {"{{- 'a' -}}\n   {% if true %}x{% endif %}", "ax"},
      {"{% if true -%}\n   {% if true %}x{% endif %}\n{% endif %}", "x"},
  });
}

TEST(ChatTemplateWhitespace, TrailingNewlineAndLineEndings) {
  ExpectRenders({
      {"x\n", "x"},
      {"x\n\n", "x\n"},
      {"a\r\nb\rc", "a\nb\nc"},
      {"{% if true %}\r\nx{% endif %}", "x"},
  });
}

// ---- Expressions ----

TEST(ChatTemplateExpressions, LiteralsPrintAsPythonDoes) {
  ExpectRenders({
      {"{{ 'it\\'s' }}|{{ \"dq\\\"\" }}|{{ 'tab\\there' }}|{{ 'uni\\u00e9' }}|{{ '\\x41' }}|"
       "{{ 'a\\qb' }}|{{ 'a' 'b' }}",
       "it's|dq\"|tab\there|unié|A|a\\qb|ab"},
      {"{{ none }} {{ None }} {{ true }} {{ False }} {{ 42 }} {{ -7 }} {{ 1_000 }}",
       "None None True False 42 -7 1000"},
      {"{{ (1, 2) }} {{ (1,) }} {{ () }} {{ 1, 2 }} {{ [] }} {{ {} }} {{ {'a': {'b': [1, 'x']}} }}",
       "(1, 2) (1,) () (1, 2) [] {} {'a': {'b': [1, 'x']}}"},
      {R"({{ [1, 'a', none, true, 1.5, {'k': "it's"}] }})",
       R"([1, 'a', None, True, 1.5, {'k': "it's"}])"},
      {R"({{ ["it's", 'q"', 'a\\b', 'tab\t', 'both\'"', 'é', '\x01', 'nb\u00a0sp'] }})",
       R"(["it's", 'q"', 'a\\b', 'tab\t', 'both\'"', 'é', '\x01', 'nb\xa0sp'])"},
  });
}

TEST(ChatTemplateExpressions, FloatsPrintLikePythonRepr) {
  ExpectRenders({
      {"{{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ -0.0 }}",
       "1.0 0.30000000000000004 1e+16 1000000000000000.0 0.0001 1e-05 -0.0"},
      {"{{ 1.5e300 * 1e10 }} {{ 100.0 }} {{ 123456.789 }} {{ 1/3 }} {{ 1.5e-7 }} {{ 2.5e100 }}",
       "inf 100.0 123456.789 0.3333333333333333 1.5e-07 2.5e+100"},
  });
}

TEST(ChatTemplateExpressions, ArithmeticFollowsPython) {
  ExpectRenders({
      {"{{ 'a' ~ 1 ~ none ~ true }} {{ 'a' + 'b' }} {{ [1] + [2] }} {{ 'ab' * 2 }} {{ [0] * 3 }}",
       "a1NoneTrue ab [1, 2] abab [0, 0, 0]"},
      {"{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 10 // 3 }} {{ -10 // 3 }} {{ 10 % 3 }} {{ -10 % 3 }}",
       "1024 0.5 3 -4 1 2"},
      {"{{ 10.5 // 3 }} {{ 1 / 4 }} {{ 4 / 2 }} {{ true + 1 }} {{ 7 % -3 }} {{ -10.5 % 3 }}",
       "3.0 0.25 2.0 2 -2 1.5"},
  });
}

TEST(ChatTemplateExpressions, OperatorPrecedenceFollowsJinja) {
  ExpectRenders(
      {
          // Jinja binds unary minus before **, and filters and tests before everything else.
          {"{{ -2**2 }} {{ 2**3**2 }} {{ 1 + 2 * 3 ** 2 }} {{ (1 + 2) * 3 }} {{ 2 * 3 ~ 4 }}",
           "4 64 19 9 64"},
          {"{{ -x | abs }} {{ xs | length - 1 }} {{ not missing is defined }} {{ not 1 == 2 }}",
           "4 2 True True"},
          // Comparisons chain as in Python: 1 < 2 == true is 1 < 2 and 2 == true.
          {"{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 < 2 == true }}", "True False False"},
          {"{{ 1 if 1 > 2 else 2 if 2 > 1 else 3 }}|{{ 1 if false }}|{{ 'x' if none else 'y' }}",
           "2||y"},
          {"{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ none or [] }} {{ '' and 'y' }}|{{ 1 and 0 or 5 }}",
           "x b [] |5"},
          {"{{ not 0 }} {{ not 'a' }} {{ true or 1/0 }} {{ false and 1/0 }}",
           "True False True False"},
      },
      {{"x", 4}, {"xs", {1, 2, 3}}});
}

TEST(ChatTemplateExpressions, MembershipAndComparison) {
  ExpectRenders({
      {"{{ 'ell' in 'hello' }} {{ 1 in [1, 2] }} {{ 'a' in {'a': 1} }} {{ 'z' not in 'abc' }}",
       "True True True True"},
      {"{{ 3 not in [1] }} {{ 'a' in missing }} {{ [1, 2] == [1, 2] }} {{ (1, 2) == [1, 2] }}",
       "True False True False"},
      {"{{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ none == none }} {{ 1 != '1' }}",
       "True True True True True"},
      // NaN equals nothing (two NaNs made apart are two objects, so lists of them differ too).
      {"{{ ('nan'|float) == ('nan'|float) }} {{ ('nan'|float) == 1 }} {{ ('nan'|float) != 0 }} "
       "{{ 1 in ['nan'|float] }} {{ [1, 'nan'|float] == [1, 'nan'|float] }}",
       "False False True False False"},
  });
}

TEST(ChatTemplateExpressions, SubscriptsAttributesAndSlices) {
  ordered_json message =
      ordered_json::parse(R"({"role": "user", "content": "hi",)"
                          R"( "tool_calls": [{"id": "c1", "function": {"name": "f"}}]})");
  ExpectRenders(
      {
          {"{{ m.role }} {{ m['content'] }} {{ m['tool_calls'][0].function.name }} "
           "{{ m.tool_calls.0.id }}",
           "user hi f c1"},
          {"{{ 'abc'[::-1] }} {{ xs[1:] }} {{ xs[:-1] }} {{ xs[::2] }} {{ xs[-2:] }} {{ xs[10:] }}",
           "cba [2, 3, 4, 5] [1, 2, 3, 4] [1, 3, 5] [4, 5] []"},
          {"{{ 'héllo'[1:3] }} {{ 'héllo'[1] }} {{ xs[-1] }} [{{ xs[10] }}] {{ (1, 2, 3)[1:] }}",
           "él é 5 [] (2, 3)"},
          {"{{ xs[4:1:-1] }} {{ xs[:2:-2] }} {{ 'héllo'[::-2] }}", "[5, 4, 3] [5] olh"},
      },
      {{"m", message}, {"xs", {1, 2, 3, 4, 5}}});
}

TEST(ChatTemplateExpressions, UndefinedIsLenientUntilReadFrom) {
  ExpectRenders({
      {"[{{ missing }}] {{ missing | length }} {{ missing is defined }} {{ missing ~ 'a' }}",
       "[] 0 False a"},
      {"{% for x in missing %}x{% else %}empty{% endfor %} {{ missing == missing }} {{ [missing] "
       "}}",
       "empty True [Undefined]"},
      {"{% if missing %}yes{% else %}no{% endif %} {{ missing | default('d') }}", "no d"},
      // A missing attribute or item is undefined...
      {"{{ {'a': 1}.b is defined }} [{{ [1][5] }}] [{{ 'abc'.nothing }}]", "False [] []"},
  });
  // ...and reading an attribute, item or slice of undefined fails, as in Jinja.
  EXPECT_NE(RenderError("{{ missing.attr }}").find("line 1: 'missing' is undefined"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ missing.attr is defined }}").find("'missing' is undefined"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ d.a.b }}", {{"d", ordered_json::object()}}).find("'d.a' is undefined"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ m[0]['k'][1:] }}", {{"m", {ordered_json::object()}}})
                .find("'m[0]['k']' is undefined"),
            std::string::npos);
}

TEST(ChatTemplateExpressions, JsonInputKeepsKeyOrderAndTypes) {
  ordered_json variables =
      ordered_json::parse(R"({"d": {"zeta": 1, "alpha": [true, null, 2.5, "s"], "mid": {}},)"
                          R"( "big": 18446744073709551615})");
  ExpectRenders({{"{{ d }} {{ d | tojson }}",
                  "{'zeta': 1, 'alpha': [True, None, 2.5, 's'], 'mid': {}} "
                  R"({"zeta": 1, "alpha": [true, null, 2.5, "s"], "mid": {}})"},
                 {"{{ big }}", "1.8446744073709552e+19"}},
                variables);
}

// ---- Statements ----

TEST(ChatTemplateStatements, IfElifElse) {
  for (auto [x, expected] :
       std::vector<std::pair<int, std::string>>{{7, "big"}, {3, "medium"}, {1, "small"}}) {
    EXPECT_EQ(
        Render("{% if x > 5 %}big{% elif x > 2 %}medium{% else %}small{% endif %}", {{"x", x}}),
        expected);
  }
}

TEST(ChatTemplateStatements, ForLoopVariables) {
  ExpectRenders({
      {"{% for i in [1, 2, 3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
       "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}"
       "{{ loop.nextitem }}{{ loop.cycle('a', 'b') }};{% endfor %}",
       "1032TrueFalse32a;2121FalseFalse313b;3210FalseTrue32a;"},
      {"{% for i in [1, 2] %}{% for j in 'ab' %}{{ loop.index }}{{ j }}{% endfor %}"
       "{{ loop.index }}|{% endfor %}",
       "1a2b1|1a2b2|"},
  });
}

TEST(ChatTemplateStatements, ForFiltersElseBreakAndContinue) {
  ExpectRenders({
      {"{% for i in range(10) if i is odd %}{{ i }}:{{ loop.index }}/{{ loop.length }},{% endfor "
       "%}",
       "1:1/5,3:2/5,5:3/5,7:4/5,9:5/5,"},
      {"{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}"
       "{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}",
       "0134"},
      {"{% for x in [] %}x{% else %}none{% endfor %}", "none"},
  });
}

TEST(ChatTemplateStatements, ForOverStringsDictsAndPairs) {
  ExpectRenders({
      {"{% for c in 'héllo' %}{{ c }}.{% endfor %}", "h.é.l.l.o."},
      {"{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}", "ba"},
      {"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}", "a=1;b=2;"},
      {"{% for a, b in [[1, 2], (3, 4)] %}{{ a + b }}{% endfor %}", "37"},
      {"{% for (a, b) in [[1, 2]] %}{{ a }}{{ b }}{% endfor %}", "12"},
  });
}

TEST(ChatTemplateStatements, ScopesFollowJinja) {
  ExpectRenders({
      // A loop body sees outer variables; what it sets stays in the iteration.
      {"{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = x + 10 %}{{ x }},{% endfor %}{{ x }}",
       "111,111,1"},
      // `if` opens no scope.
      {"{% if true %}{% set y = 5 %}{% endif %}{{ y }}{% for i in [1] %}{% set z = 1 %}"
       "{% endfor %}[{{ z }}]",
       "5[]"},
  });
}

TEST(ChatTemplateStatements, SetForms) {
  ExpectRenders({
      {"{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = 1, 2 %}{{ t }}", "12(1, 2)"},
      {"{% set s %}  block {{ 1 }} {% endset %}[{{ s }}]", "[  block 1 ]"},
      {"{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{{ ns.a }} {{ ns }} {{ ns['a'] }}",
       "2 <Namespace {'a': 2}> 2"},
      {"{% set ns = namespace(text='') %}{% set ns.text %}in block{% endset %}{{ ns.text }}",
       "in block"},
  });
}

TEST(ChatTemplateStatements, ListsAreSharedByReference) {
  ExpectRenders(
      {
          {"{% set a = [] %}{% set b = a %}{% set _ = b.append(1) %}{{ a }}", "[1]"},
          {"{% set ns = namespace(count=0, names=[]) %}{% for m in msgs %}"
           "{% set ns.count = ns.count + 1 %}{% set _ = ns.names.append(m | upper) %}{% endfor %}"
           "{{ ns.count }} {{ ns.names }}",
           "2 ['A', 'B']"},
      },
      {{"msgs", {"a", "b"}}});
}

TEST(ChatTemplateStatements, MacrosWithDefaultsAndKeywords) {
  ExpectRenders({
      {"{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}"
       "{{ greet('Bob') }} {{ greet('Al', greeting='Hi') }} {{ greet(greeting='Yo', name='Z') }} "
       "{{ greet() }}",
       "Hello, Bob! Hi, Al! Yo, Z! Hello, !"},
      {"{% macro f(a, b=a * 2) %}{{ a }}-{{ b }}{% endmacro %}{{ f(3) }}", "3-6"},
      {"{% macro f(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ f(1, 2, 3, k=4) }}",
       "1(2, 3){'k': 4}"},
  });
}

TEST(ChatTemplateStatements, MacroScopesAndRecursion) {
  ExpectRenders({
      {"{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}"
       "{% endmacro %}{{ fact(10) }}",
       "3628800"},
      // A macro reads template variables when called, and its own sets stay inside.
      {"{% macro show() %}{{ late }}{% endmacro %}{% set late = 'seen' %}{{ show() }}", "seen"},
      {"{% macro f(x) %}{% set x = x * 2 %}{{ x }}{% endmacro %}{% set x = 1 %}{{ f(5) }}{{ x }}",
       "101"},
  });
}

TEST(ChatTemplateStatements, GenerationBlockRendersItsBody) {
  EXPECT_EQ(Render("a{% generation %}answer {{ 1 }}{% endgeneration %}b"), "aanswer 1b");
}

// ---- Filters ----

TEST(ChatTemplateFilters, Tojson) {
  ordered_json variables = ordered_json::parse(R"({
    "x": {"name": "say \"hi\"", "emoji": "🦙 ü", "nested": {"list": [], "obj": {}}, "n": -3,
          "f": 0.1, "ctrl": "a\u0001b\n\t\\"},
    "y": {"a": [1, {"b": null}], "c": {}},
    "z": {"b": 1, "a": 2}})");
  ExpectRenders(
      {
          {"{{ x | tojson }}",
           R"({"name": "say \"hi\"", "emoji": "🦙 ü", "nested": {"list": [], "obj": {}}, )"
           R"("n": -3, "f": 0.1, "ctrl": "a\u0001b\n\t\\"})"},
          {"{{ y | tojson(indent=2) }}",
           "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {}\n}"},
          {"{{ [1] | tojson(indent='\t') }}", "[\n\t1\n]"},
          {"{{ 'é🦙' | tojson(ensure_ascii=true) }}", R"("\u00e9\ud83e\udd99")"},
          {"{{ y | tojson(separators=(',', ':')) }}", R"({"a":[1,{"b":null}],"c":{}})"},
          {"{{ z | tojson(sort_keys=true) }} {{ z | tojson }}",
           R"({"a": 2, "b": 1} {"b": 1, "a": 2})"},
          {"{{ {'b': 1, 'a': [1, 2.5, none, true, 1.0]} | tojson }} {{ (1, 'x') | tojson }}",
           R"({"b": 1, "a": [1, 2.5, null, true, 1.0]} [1, "x"])"},
      },
      variables);
}

TEST(ChatTemplateFilters, Strings) {
  ExpectRenders({
      {"{{ 'hello WORLD-x(y' | title }} {{ 'hELLO' | capitalize }} {{ 'ab' | upper }} {{ 'AB' | "
       "lower }}",
       "Hello World-X(Y Hello AB ab"},
      {"{{ 'Ünïcödé ß' | upper }} {{ 'ÀÉÎ' | lower }}", "ÜNÏCÖDÉ SS àéî"},
      {"{{ '  x  ' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ 'a-b-c' | replace('-', '+') }}|"
       "{{ 'a-b-c' | replace('-', '+', 1) }}",
       "x|hi|a+b+c|a+b-c"},
      {"{{ 'a<b>&\"\\'' | e }}|{{ 'x' | escape }}|{{ 'x' | safe }}|{{ 5 | string }}",
       "a&lt;b&gt;&amp;&#34;&#39;|x|x|5"},
      {"{{ 'l1\\nl2\\n\\nl4' | indent(2) }}|{{ 'l1\\nl2' | indent(2, true) }}|"
       "{{ 'l1\\n\\nl2' | indent(width='> ', blank=true) }}",
       "l1\n  l2\n\n  l4|  l1\n  l2|l1\n> \n> l2"},
  });
}

TEST(ChatTemplateFilters, Numbers) {
  ExpectRenders({
      {"{{ '5' | int + 1 }} {{ '5.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} "
       "{{ '0x1A' | int(base=16) }}",
       "6 5 0 7 3 26"},
      {"{{ '2.5' | float }} {{ 'x' | float }} {{ 5 | float }} {{ -3 | abs }} {{ -2.5 | abs }}",
       "2.5 0.0 5.0 3 2.5"},
      {"{{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 2.1 | round(method='ceil') "
       "}} "
       "{{ 2.9 | round(method='floor') }} {{ 3 | round }}",
       "2.0 4.0 2.67 3.0 2.0 3"},
  });
}

TEST(ChatTemplateFilters, Sequences) {
  ExpectRenders({
      {"{{ [1, 2, 3] | length }} {{ 'héllo' | count }} {{ {'a': 1} | length }} {{ [1, 2, 3] | "
       "first }} "
       "{{ [1, 2, 3] | last }} {{ 'abc' | first }}",
       "3 5 1 1 3 a"},
      {"{{ [1, 2, 3] | reverse | list }} {{ 'abc' | reverse }} {{ 'ab' | list }} {{ [1, 2] | join "
       "}} "
       "{{ [1, 'a'] | join(', ') }}",
       "[3, 2, 1] cba ['a', 'b'] 12 1, a"},
      {"{{ [3, 1, 2] | sort }} {{ ['b', 'A', 'c'] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} "
       "{{ [{'n': 2}, {'n': 1}] | sort(attribute='n') | map(attribute='n') | list }}",
       "[1, 2, 3] ['A', 'b', 'c'] [3, 2, 1] [1, 2]"},
      {"{{ [1, 2, 2, 'a', 'A'] | unique | list }} {{ [1, 5, 3] | max }} {{ [1, 5, 3] | min }} "
       "{{ ['b', 'A'] | min }} {{ [1, 2, 3] | sum }} {{ [1, 2, 3] | sum(start=10) }}",
       "[1, 2, 'a'] 5 1 A 6 16"},
      {"{{ {'b': 2, 'a': 1} | dictsort }} {{ {'b': 1, 'a': 2} | dictsort(by='value') }} "
       "{{ {'a': 1} | items | list }} {{ missing | items | list }}",
       "[('a', 1), ('b', 2)] [('b', 1), ('a', 2)] [('a', 1)] []"},
      {"{{ none | default('d') }}|{{ missing | default('d') }}|{{ '' | default('d', true) }}|"
       "{{ missing | d('x') }}|{{ 0 | d(1) }}",
       "None|d|d|x|0"},
  });
}

TEST(ChatTemplateFilters, SelectRejectAndMap) {
  ordered_json users = ordered_json::parse(R"([{"name": "Ann", "active": true, "age": 40},)"
                                           R"( {"name": "Bob", "active": false, "age": 20}])");
  ExpectRenders(
      {
          {"{{ users | selectattr('active') | map(attribute='name') | join(', ') }}|"
           "{{ users | rejectattr('active') | map(attribute='name') | list }}|"
           "{{ users | selectattr('age', 'gt', 30) | map(attribute='name') | first }}|"
           "{{ users | map(attribute='nick', default='?') | list }}",
           "Ann|['Bob']|Ann|['?', '?']"},
          {"{{ [1, 2, 3, 4] | select('odd') | list }} {{ [1, 2, 3, 4] | reject('even') | list }} "
           "{{ [0, 1, '', 'a', none] | select | list }} {{ [1, 2, 3] | select('gt', 1) | list }} "
           "{{ ['a', 'b'] | map('upper') | list }} {{ [1, 2, 3] | map('string') | join('-') }}",
           "[1, 3] [1, 3] [1, 'a'] [2, 3] ['A', 'B'] 1-2-3"},
          {"{{ users | selectattr('name', 'equalto', 'Bob') | list | length }}", "1"},
      },
      {{"users", users}});
}

// ---- Tests (`is`) ----

TEST(ChatTemplateTests, TypeTests) {
  ExpectRenders({
      {"{{ 1 is defined }} {{ missing is defined }} {{ missing is undefined }} {{ none is none }} "
       "{{ 1 is not none }} {{ 'a' is string }} {{ 1 is string }} {{ {} is mapping }} "
       "{{ [] is mapping }}",
       "True False True True True True False True False"},
      {"{{ [] is iterable }} {{ 'a' is iterable }} {{ 5 is iterable }} {{ 1 is number }} "
       "{{ 1.5 is number }} {{ true is number }} {{ 'a' is number }} {{ 'ab' is sequence }}",
       "True True False True True True False True"},
      {"{{ 1 is integer }} {{ true is integer }} {{ 1.0 is float }} {{ 1 is float }} "
       "{{ true is boolean }} {{ 1 is boolean }} {{ true is true }} {{ 1 is true }} "
       "{{ false is false }} {{ range is callable }}",
       "True False True False True False True False True True"},
  });
}

TEST(ChatTemplateTests, ValueTests) {
  ExpectRenders({
      {"{{ 3 is odd }} {{ 4 is even }} {{ 2.5 is odd }} {{ 9 is divisibleby 3 }} "
       "{{ 9 is divisibleby(2) }} {{ 'a' is equalto 'a' }} {{ 2 is eq 3 }} {{ 2 == 2 is true }}",
       "True True False True False True False False"},  // 2 == (2 is true)
      {"{{ 'ab' is lower }} {{ 'AB' is upper }} {{ 2 is in [1, 2] }} {{ 3 is gt 2 }} {{ 3 is le 2 "
       "}} "
       "{{ 3 is ne 2 }} {{ none is sameas none }}",
       "True True True True False True True"},
  });
}

// ---- Methods ----

TEST(ChatTemplateMethods, StringMethods) {
  ExpectRenders(
      {
          {"{{ content.split('</think>')[-1].lstrip('\\n') }}|{{ '  a b  '.strip() }}|"
           "{{ 'xxaxx'.strip('x') }}|{{ ' a '.lstrip() }}|{{ ' a '.rstrip() }}",
           "Answer|a b|a|a | a"},
          {"{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} "
           "{{ 'a\\nb'.splitlines() }}",
           "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c'] ['a', 'b']"},
          {"{{ 'abc'.startswith('a') }} {{ 'abc'.startswith(('x', 'b')) }} {{ 'abc'.endswith('bc') "
           "}} "
           "{{ 'héllo'.find('l') }} {{ 'abc'.find('z') }} {{ 'banana'.count('an') }}",
           "True False True 2 -1 2"},
          {"{{ 'a b'.replace(' ', '_') }} {{ '-'.join(['a', 'b']) }} {{ 'hello world\\'s'.title() "
           "}} "
           "{{ 'hELLO'.capitalize() }} {{ 'Ab'.upper() }}{{ 'Ab'.lower() }}",
           "a_b a-b Hello World'S Hello ABab"},
      },
      {{"content", "<think>\nhm\n</think>\n\nAnswer"}});
}

TEST(ChatTemplateMethods, DictAndListMethods) {
  ExpectRenders(
      {
          {"{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 5) }} {{ d.keys() | list }} "
           "{{ d.values() | list }} {{ d.items() | list }}",
           "1 None 5 ['a', 'b'] [1, 2] [('a', 1), ('b', 2)]"},
          {"{% set l = [3, 1] %}{% set _ = l.append(2) %}{{ l }} {{ l.pop() }} {{ l }} "
           "{{ l.index(1) }} {{ l.count(3) }}{% set _ = l.extend([7, 8]) %} {{ l }} {{ l.pop(0) }}",
           "[3, 1, 2] 2 [3, 1] 1 1 [3, 1, 7, 8] 3"},
          // A method name wins over a key with `.`, a key wins with `[]`, as in Jinja.
          {"{{ e.items is defined }} {{ e['items'] }}", "True 5"},
      },
      {{"d", {{"a", 1}, {"b", 2}}}, {"e", {{"items", 5}}}});
}

// ---- Globals ----

TEST(ChatTemplateGlobals, RangeDictNamespace) {
  ExpectRenders({
      {"{{ range(3) | list }} {{ range(1, 10, 3) | list }} {{ range(5, 0, -2) | list }} "
       "{{ range(0) | list }}",
       "[0, 1, 2] [1, 4, 7] [5, 3, 1] []"},
      {"{{ dict(a=1, b='x') }} {{ dict(a=1)['a'] }} {{ namespace(a=1).a }} {{ namespace() }}",
       "{'a': 1, 'b': 'x'} 1 1 <Namespace {}>"},
  });
}

TEST(ChatTemplateGlobals, StrftimeNowFormatsTheLocalTime) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string rendered = Render("{{ strftime_now('%Y') }}|{{ strftime_now('') }}|");
  EXPECT_EQ(rendered, std::to_string(1900 + local.tm_year) + "||");
}

TEST(ChatTemplateGlobals, RaiseExceptionGivesItsMessageExactly) {
  EXPECT_EQ(RenderError("{{ raise_exception('Conversation roles must alternate!') }}"),
            "Conversation roles must alternate!");
  ordered_json variables = ordered_json::parse(R"({"messages": [{"role": "tool"}]})");
  EXPECT_EQ(RenderError("{% for m in messages %}{% if m.role not in ['user', 'assistant'] %}"
                        "{{ raise_exception('Unknown role: ' + m.role) }}{% endif %}{% endfor %}",
                        variables),
            "Unknown role: tool");
}

TEST(ChatTemplateGlobals, VariablesShadowBuiltins) {
  EXPECT_EQ(Render("{{ range }}", {{"range", "mine"}}), "mine");
}

// ---- Errors ----

TEST(ChatTemplateErrors, SyntaxErrorsNameTheProblemAndLine) {
  std::string error = ParseError("line 1\n{% if true %}\n{{ 1 + }}\n{% endif %}");
  EXPECT_NE(error.find("line 3"), std::string::npos) << error;
  EXPECT_NE(error.find("expected an expression"), std::string::npos) << error;

  error = ParseError("a\n{% for x in y %}x{% endif %}");
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
  EXPECT_NE(error.find("'endif'"), std::string::npos) << error;

  EXPECT_NE(ParseError("{% if true %}x").find("'if' from line 1 is not closed"), std::string::npos);
  EXPECT_NE(ParseError("x\n{{ 'abc }}").find("line 2: unterminated string"), std::string::npos);
  EXPECT_NE(ParseError("{# never closed").find("unterminated comment"), std::string::npos);
  EXPECT_NE(ParseError("{{ 1 +").find("missing '}}'"), std::string::npos);
  EXPECT_NE(ParseError("{% if x %}").find("expected 'elif' or 'else' or 'endif'"),
            std::string::npos);
  EXPECT_NE(ParseError("{{ x | nosuchfilter }}").find("unknown filter 'nosuchfilter'"),
            std::string::npos);
  EXPECT_NE(ParseError("{{ x is nosuchtest }}").find("unknown test 'nosuchtest'"),
            std::string::npos);
  EXPECT_NE(ParseError("{% include 'x' %}").find("unsupported tag 'include'"), std::string::npos);
  EXPECT_NE(ParseError("{% break %}").find("'break' outside a for loop"), std::string::npos);
  EXPECT_NE(ParseError("{{ [1, 2) }}").find("unexpected ')'"), std::string::npos);
  EXPECT_NE(ParseError("{{ a ! b }}").find("unexpected character '!'"), std::string::npos);
  EXPECT_NE(ParseError("{% macro f(a=1, b) %}{% endmacro %}").find("non-default argument"),
            std::string::npos);
  EXPECT_NE(ParseError("{{ f(a=1, 2) }}").find("positional argument after keyword"),
            std::string::npos);
}

TEST(ChatTemplateErrors, RuntimeErrorsNameTheProblemAndLine) {
  std::string error = RenderError("ok\n{{ 1/0 }}");
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
  EXPECT_NE(error.find("division by zero"), std::string::npos) << error;
  EXPECT_NE(RenderError("{{ 5 // 0 }}").find("division by zero"), std::string::npos);
  EXPECT_NE(RenderError("{{ 5 % 0 }}").find("modulo by zero"), std::string::npos);
  EXPECT_NE(RenderError("{{ foo() }}").find("'foo' is undefined"), std::string::npos);
  EXPECT_NE(RenderError("{{ m.nothing() }}", {{"m", ordered_json::object()}})
                .find("'nothing' is undefined"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ 'a' + 1 }}").find("unsupported operand types for +: 'str' and 'int'"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ missing + 1 }}").find("undefined value used with '+'"),
            std::string::npos);
  EXPECT_NE(
      RenderError("{{ 'a' < 1 }}").find("'<' not supported between instances of 'str' and 'int'"),
      std::string::npos);
  EXPECT_NE(RenderError("{% for x in 5 %}{% endfor %}").find("'int' object is not iterable"),
            std::string::npos);
  EXPECT_NE(
      RenderError("{% for a, b in [[1, 2, 3]] %}{% endfor %}").find("too many values to unpack"),
      std::string::npos);
  EXPECT_NE(RenderError("{% set x = {'a': 1} %}{% set x.a = 2 %}").find("non-namespace object"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ 1 | length }}").find("has no len()"), std::string::npos);
  EXPECT_NE(RenderError("{{ 'x'.split('') }}").find("empty separator"), std::string::npos);
  EXPECT_NE(RenderError("{{ 'x' | round }}").find("round() expects a number"), std::string::npos);
  EXPECT_NE(RenderError("{{ 'x' | replace('a') }}").find("missing required argument 'new'"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ 'x' | trim(bad=1) }}").find("unexpected keyword argument 'bad'"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ 5[1:] }}").find("cannot be sliced"), std::string::npos);
  EXPECT_NE(RenderError("{{ missing | tojson }}").find("not JSON serializable"), std::string::npos);
  EXPECT_NE(RenderError("{{ 9223372036854775807 + 1 }}").find("integer overflow"),
            std::string::npos);
}

TEST(ChatTemplateErrors, VariablesMustBeAnObject) {
  Expected<ChatTemplate> parsed = ChatTemplate::Parse("x");
  ASSERT_TRUE(parsed.ok());
  Expected<std::string> rendered = parsed->Render(ordered_json::array());
  ASSERT_FALSE(rendered.ok());
  EXPECT_NE(rendered.error().find("must be a JSON object"), std::string::npos);
}

TEST(ChatTemplateErrors, TemplatesAreReusableAndCopyable) {
  Expected<ChatTemplate> parsed = ChatTemplate::Parse("{{ a }}");
  ASSERT_TRUE(parsed.ok());
  ChatTemplate copy = *parsed;
  EXPECT_EQ(*copy.Render({{"a", 1}}), "1");
  EXPECT_EQ(*parsed->Render({{"a", "x"}}), "x");
  EXPECT_EQ(*copy.Render(nlohmann::json{{"a", 2}}), "2");  // a plain nlohmann::json converts
}

// ---- Limits: errors instead of crashes or runaway work ----

TEST(ChatTemplateLimits, RecursionIsBounded) {
  EXPECT_NE(RenderError("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
                .find("(unbounded recursion?)"),
            std::string::npos);
  EXPECT_NE(
      RenderError("{% macro f(n) %}{% for i in [1] %}{% if true %}{{ [[f(n + 1)]] }}{% endif %}"
                  "{% endfor %}{% endmacro %}{{ f(0) }}")
          .find("template evaluation nested too deeply (unbounded recursion?)"),
      std::string::npos);
  std::string deep_macro_error =
      RenderError("{% macro f(n) %}{{ f(n + 1) if n < 300 else n }}{% endmacro %}{{ f(0) }}");
  EXPECT_NE(deep_macro_error.find("macro calls nested deeper than 256"), std::string::npos)
      << deep_macro_error;
}

TEST(ChatTemplateLimits, DeepSyntaxIsRejected) {
  std::string parens = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_NE(ParseError(parens).find("nested too deeply"), std::string::npos);
  std::string chain = "{{ 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_NE(ParseError(chain + " }}").find("nested too deeply"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 1000; ++i) blocks += "{% if true %}";
  EXPECT_NE(ParseError(blocks).find("nested too deeply"), std::string::npos);
  std::string lists = "{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}";
  EXPECT_NE(ParseError(lists).find("nested too deeply"), std::string::npos);
  EXPECT_NE(ParseError("{{ " + std::string(5000, '-') + "1 }}").find("nested too deeply"),
            std::string::npos);
  std::string nots = "{{ ";
  for (int i = 0; i < 5000; ++i) nots += "not ";
  EXPECT_NE(ParseError(nots + "1 }}").find("nested too deeply"), std::string::npos);
}

TEST(ChatTemplateLimits, HugeOutputsAndLoopsAreStopped) {
  EXPECT_NE(RenderError("{{ range(100000000) | length }}").find("range() of more than"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ 'x' * 1000000000 }}").find("string longer than"), std::string::npos);
  EXPECT_NE(RenderError("{{ [1] * 1000000000 }}").find("list longer than"), std::string::npos);
  EXPECT_NE(RenderError("{% set s = 'x' * 1000000 %}{% for i in range(100) %}{{ s }}{% endfor %}")
                .find("template output longer than"),
            std::string::npos);
  EXPECT_NE(RenderError("{% set ns = namespace(s='x') %}{% for i in range(40) %}"
                        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
                .find("string longer than"),
            std::string::npos);
  EXPECT_NE(RenderError("{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}"
                        "{% endfor %}")
                .find("template ran more than 1000000 steps (loop iterations"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ 'x' | indent(100000000000) }}").find("string longer than"),
            std::string::npos);
}

TEST(ChatTemplateLimits, DeepValuesAreSafe) {
  // 100000 nested lists: printing stops with an error, and freeing them does not recurse.
  const std::string nest =
      "{% set ns = namespace(root=[]) %}{% set ns.tail = ns.root %}"
      "{% for i in range(100000) %}{% set next = [] %}{% set _ = ns.tail.append(next) %}"
      "{% set ns.tail = next %}{% endfor %}";
  EXPECT_NE(RenderError(nest + "{{ ns.root }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(RenderError(nest + "{{ ns.root == ns.root }}").find("nested too deeply"),
            std::string::npos);
  EXPECT_EQ(Render(nest + "done"), "done");
  ordered_json deep = ordered_json::array();
  for (int i = 0; i < 1000; ++i) deep = ordered_json::array({deep});
  EXPECT_NE(RenderError("{{ x }}", {{"x", deep}}).find("nested too deeply"), std::string::npos);
}

TEST(ChatTemplateLimits, CyclesAreRefused) {
  EXPECT_NE(RenderError("{% set a = [] %}{% set _ = a.append(a) %}").find("inside itself"),
            std::string::npos);
  EXPECT_NE(RenderError("{% set a = [] %}{% set _ = a.append([{'k': a}]) %}").find("inside itself"),
            std::string::npos);
  EXPECT_NE(RenderError("{% set a = [] %}{% set _ = a.append(a.append) %}").find("inside itself"),
            std::string::npos);
  EXPECT_NE(RenderError("{% set ns = namespace() %}{% set ns.me = [ns] %}").find("inside itself"),
            std::string::npos);
}

// ---- Per-rendering limits (ChatTemplate::RenderLimits) ----

TEST(ChatTemplateRenderLimits, RepetitionPastTheSizeLimitFailsBeforeAllocating) {
  ChatTemplate::RenderLimits limits;
  limits.max_output_bytes = size_t{1} << 20;
  largest_allocation = 0;
  auto start = std::chrono::steady_clock::now();
  Expected<std::string> rendered = RenderWithin("{{ 'hello ' * 10000000 }}", limits);
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(rendered.ok());
  EXPECT_EQ(rendered.error(), "chat template error at line 1: string longer than 1048576 bytes");
  EXPECT_LT(elapsed, std::chrono::milliseconds(250));
  EXPECT_LT(largest_allocation.load(), limits.max_output_bytes);
}

TEST(ChatTemplateRenderLimits, HugeWidthsAndPrecisionsFailBeforeAllocating) {
  ChatTemplate::RenderLimits limits;
  limits.max_output_bytes = size_t{1} << 20;
  for (std::string_view source : {
           "{{ '{:>1000000000}'.format('a') }}",
           "{{ '{:.1000000000f}'.format(1.5) }}",
           "{{ '%01000000000d' % 1 }}",
           "{{ '%.1000000000d' % 1 }}",
           "{{ '%*s' % (1000000000, 'a') }}",
           "{{ 'a'.center(1000000000) }}",
           "{{ 'a'.zfill(1000000000) }}",
           "{{ 'a' | center(1000000000) }}",
       }) {
    largest_allocation = 0;
    Expected<std::string> rendered = RenderWithin(source, limits);
    ASSERT_FALSE(rendered.ok()) << source;
    EXPECT_NE(rendered.error().find("string longer than 1048576 bytes"), std::string::npos)
        << source << ": " << rendered.error();
    EXPECT_LT(largest_allocation.load(), limits.max_output_bytes) << source;
  }
  EXPECT_NE(RenderError("{{ '{:.99999999999}'.format(1.5) }}").find("precision too big"),
            std::string::npos);
}

TEST(ChatTemplateRenderLimits, DefaultLimitsAreTheFormerConstants) {
  Expected<ChatTemplate> parsed = ChatTemplate::Parse("{{ 'hello ' * n }}");
  ASSERT_TRUE(parsed.ok());
  Expected<std::string> rendered = parsed->Render({{"n", 10'000'000}});
  ASSERT_TRUE(rendered.ok()) << rendered.error();
  EXPECT_EQ(rendered->size(), size_t{60'000'000});
  largest_allocation = 0;
  rendered = parsed->Render({{"n", 20'000'000}});
  ASSERT_FALSE(rendered.ok());
  EXPECT_NE(rendered.error().find("string longer than 67108864 bytes"), std::string::npos);
  EXPECT_LT(largest_allocation.load(), size_t{64} << 20);
}

TEST(ChatTemplateRenderLimits, OutputAtTheSizeLimitRendersAndOneByteMoreFails) {
  ChatTemplate::RenderLimits limits;
  limits.max_output_bytes = 10;
  for (std::string_view source : {"0123456789", "{{ 'x' * 10 }}", "{{ 'xxxxx' }}{{ 'y' * 5 }}",
                                  "{% set s %}{{ 'x' * 10 }}{% endset %}{{ s }}"}) {
    Expected<std::string> rendered = RenderWithin(source, limits);
    ASSERT_TRUE(rendered.ok()) << source << ": " << rendered.error();
    EXPECT_EQ(rendered->size(), size_t{10}) << source;
  }
  for (std::string_view source :
       {"0123456789A", "{{ 'xxxxx' }}{{ 'y' * 6 }}", "{% set s %}{{ 'x' * 10 }}.{% endset %}"}) {
    Expected<std::string> rendered = RenderWithin(source, limits);
    ASSERT_FALSE(rendered.ok()) << source;
    EXPECT_NE(rendered.error().find("template output longer than 10 bytes"), std::string::npos)
        << source << ": " << rendered.error();
  }
  // Every way of building a string: each of these makes 11 bytes or more.
  for (std::string_view source : {
           "{{ 'x' * 11 }}",
           "{{ 11 * 'x' }}",
           "{{ 'xxxxxx' ~ 'xxxxx' }}",
           "{{ 'xxxxxx' + 'xxxxx' }}",
           "{{ 'xxxxxx' ~ 12345 }}",
           "{{ ['xxxxxx', 'xxxxx'] | join }}",
           "{{ 'xxxxxx'.join(['a', 'b', 'c']) }}",
           "{{ 'xx' | replace('x', 'xxxxxx') }}",
           "{{ 'xx'.replace('x', 'xxxxxx') }}",
           "{{ 'xxx' | replace('', 'yyy') }}",
           "{{ 'a\nb' | indent(10) }}",
           "{{ 'a' | indent(11, first=true) }}",
           "{{ ['xxxx', 'xxxx'] | tojson }}",
           "{{ {'k': [1]} | tojson(indent=12) }}",
           "{{ ['xxxx', 'xxxx'] | string }}",
           "{{ ['xxxx', 'xxxx'] ~ '' }}",
           "{{ '<<<' | escape }}",
           "{{ ['xxxxxx', 'xxxxx'] | sum(start='') }}",
           "{{ '{:>11}'.format('x') }}",
           "{{ '{:.9f}'.format(1.5) }}",
           "{{ '%11s' % 'x' }}",
           "{{ '%.11d' % 1 }}",
           "{{ '%s%s' | format('xxxxxx', 'xxxxx') }}",
           "{{ 'x'.center(11) }}",
           "{{ 'x'.rjust(11, '*') }}",
           "{{ 'x'.zfill(11) }}",
           "{{ 'x' | center(11) }}",
           "{{ 'xxxxxx' | safe + 'xxxxx' }}",
           "{{ '<<<' | forceescape }}",
       }) {
    Expected<std::string> rendered = RenderWithin(source, limits);
    ASSERT_FALSE(rendered.ok()) << source;
    EXPECT_NE(rendered.error().find("string longer than 10 bytes"), std::string::npos)
        << source << ": " << rendered.error();
  }
}

TEST(ChatTemplateRenderLimits, StepsCountLoopsCallsFilterItemsAndComparisons) {
  ChatTemplate::RenderLimits limits;
  limits.max_steps = 10;
  const std::vector<std::pair<std::string, std::string>> within_and_past = {
      {"{% for i in range(10) %}{% endfor %}", "{% for i in range(11) %}{% endfor %}"},
      {"{% for i in range(5) if i %}{% endfor %}", "{% for i in range(6) if i %}{% endfor %}"},
      {"{% macro f() %}{% endmacro %}{% for i in range(5) %}{{ f() }}{% endfor %}",
       "{% macro f() %}{% endmacro %}{% for i in range(6) %}{{ f() }}{% endfor %}"},
      {"{{ range(10) | join }}", "{{ range(11) | join }}"},
      {"{{ range(10) | map('string') | list }}", "{{ range(11) | map('string') | list }}"},
      {"{{ range(10) | select | list }}", "{{ range(11) | reject | list }}"},
      {"{{ [1, 2, 3, 4] == [1, 2, 3, 4] }}", "{{ range(10) | list == range(10) | list }}"},
      {"{{ 9 in range(10) }}", "{{ 10 in range(11) }}"},
      {"{{ [3, 2, 1] | sort }}", "{{ range(10, 0, -1) | sort }}"},
      {"{{ dict([[1, 2]] * 10) }}", "{{ dict([[1, 2]] * 11) }}"},
  };
  for (const auto& [within, past] : within_and_past) {
    Expected<std::string> rendered = RenderWithin(within, limits);
    EXPECT_TRUE(rendered.ok()) << within << ": " << rendered.error();
    rendered = RenderWithin(past, limits);
    ASSERT_FALSE(rendered.ok()) << past;
    EXPECT_NE(rendered.error().find("template ran more than 10 steps"), std::string::npos)
        << past << ": " << rendered.error();
  }
  // Each rendering has its own count.
  Expected<ChatTemplate> parsed = ChatTemplate::Parse("{% for i in range(10) %}{% endfor %}");
  ASSERT_TRUE(parsed.ok());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(parsed->Render(ordered_json::object(), limits).ok());
}

TEST(ChatTemplateRenderLimits, RenderingStopsAtItsDeadline) {
  ChatTemplate::RenderLimits limits;
  limits.max_steps = std::numeric_limits<int64_t>::max();
  limits.max_duration = std::chrono::milliseconds(50);
  // Loops, and a filter whose work grows with the square of its list.
  for (std::string_view source :
       {"{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}",
        "{{ range(1000000) | unique | length }}"}) {
    auto start = std::chrono::steady_clock::now();
    Expected<std::string> rendered = RenderWithin(source, limits);
    auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(rendered.ok()) << source;
    EXPECT_NE(rendered.error().find("template rendering took longer than 50 ms"), std::string::npos)
        << rendered.error();
    EXPECT_GE(elapsed, std::chrono::milliseconds(50));
    EXPECT_LT(elapsed, std::chrono::seconds(1));
  }
  EXPECT_TRUE(RenderWithin("{% for i in range(1000) %}{{ i }}{% endfor %}", limits).ok());
}

TEST(ChatTemplateRenderLimits, ConcurrentRenderingsKeepTheirOwnLimits) {
  Expected<ChatTemplate> parsed = ChatTemplate::Parse("{{ 'x' * n }}");
  ASSERT_TRUE(parsed.ok());
  ChatTemplate::RenderLimits tight;
  tight.max_output_bytes = 1000;
  std::atomic<int> failures{0};
  auto render = [&](const ChatTemplate::RenderLimits& limits, bool should_fit) {
    for (int i = 0; i < 200; ++i) {
      if (parsed->Render({{"n", 2000}}, limits).ok() != should_fit) ++failures;
    }
  };
  std::thread tight_renders(render, tight, false);
  std::thread default_renders(render, ChatTemplate::RenderLimits{}, true);
  tight_renders.join();
  default_renders.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace vllm
