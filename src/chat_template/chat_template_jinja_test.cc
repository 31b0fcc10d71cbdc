// Tests of the Jinja features beyond the basics that chat templates of model families use or
// may use: call, filter, with and raw blocks, loop.changed, prefixed integers, unknown filters
// inside `if`, the str methods, str.format and printf-style `%`, more filters, and Markup from
// `safe`. Expected outputs are what Python Jinja2 3.1 renders when set up as transformers sets it
// up; errors are where Jinja2 raises.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "chat_template/chat_template.h"

namespace vllm {
namespace {

using nlohmann::ordered_json;

struct Case {
  std::string source;
  std::string expected;
};

void ExpectRenders(const std::vector<Case>& cases,
                   const ordered_json& variables = ordered_json::object()) {
  for (const Case& c : cases) {
    Expected<ChatTemplate> parsed = ChatTemplate::Parse(c.source);
    ASSERT_TRUE(parsed.ok()) << parsed.error() << "\n  template: " << c.source;
    Expected<std::string> rendered = parsed->Render(variables);
    ASSERT_TRUE(rendered.ok()) << rendered.error() << "\n  template: " << c.source;
    EXPECT_EQ(*rendered, c.expected) << c.source;
  }
}

// The error of parsing, else of rendering, `source`; "" (and a failure) when both succeed.
std::string ErrorOf(std::string_view source) {
  Expected<ChatTemplate> parsed = ChatTemplate::Parse(source);
  if (!parsed.ok()) return parsed.error();
  Expected<std::string> rendered = parsed->Render(ordered_json::object());
  if (rendered.ok()) {
    ADD_FAILURE() << "rendered without error: " << *rendered << "\n  template: " << source;
    return "";
  }
  return rendered.error();
}

// Each template of `cases` fails with an error that contains its text.
void ExpectErrors(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::string error = ErrorOf(c.source);
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.source << "\n  error: " << error;
  }
}

TEST(ChatTemplateJinjaStatements, CallBlocksPassCallerToTheMacro) {
  ExpectRenders({
      {"{% macro tag(name) %}<{{ name }}>{{ caller() }}</{{ name }}>{% endmacro %}{% call tag('b') "
       "%}bold{% endcall %}",
       "<b>bold</b>"},
      {"{% macro each(items) %}{% for i in items %}{{ caller(i, loop.index) }}{% endfor %}{% "
       "endmacro %}{% call(item, n) each(['x', 'y']) %}[{{ n }}:{{ item }}]{% endcall %}",
       "[1:x][2:y]"},
      {"{% set who = 'outer' %}{% macro twice() %}{{ caller() }}{{ caller() }}{% endmacro %}{% "
       "call twice() %}{{ who }};{% endcall %}",
       "outer;outer;"},
      {"{% macro m(x='d') %}{{ x }}-{{ caller(x='z') }}{% endmacro %}{% call(x='q') m() %}{{ x "
       "}}{% endcall %}",
       "d-z"},
  });
}

TEST(ChatTemplateJinjaStatements, FilterBlocksFilterTheirOutput) {
  ExpectRenders({
      {"{% filter upper %}shout {{ 'it' }}{% endfilter %}", "SHOUT IT"},
      {"{% filter replace('a', 'o') | title %}banana split{% endfilter %}", "Bonono Split"},
      {"{% for x in [1, 2] %}{% filter trim %}  {{ x }}  {% endfilter %}{% endfor %}", "12"},
      // A break leaves the block's output unwritten.
      {"{% for i in [1] %}{% filter upper %}a{% break %}b{% endfilter %}c{% endfor %}d", "d"},
  });
}

TEST(ChatTemplateJinjaStatements, WithBlocksScopeTheirNames) {
  ExpectRenders({
      {"{% with a = 1 %}{{ a }}{% endwith %}[{{ a }}]", "1[]"},
      {"{% set a = 5 %}{% with a = a + 1, b = a %}{{ a }}{{ b }}{% set c = 3 %}{% endwith %}{{ a "
       "}}[{{ c }}]",
       "655[]"},
  });
}

TEST(ChatTemplateJinjaStatements, RawBlocksKeepTheirText) {
  ExpectRenders({
      {"{% raw %}{{ not rendered }} {% if %}{% endraw %}", "{{ not rendered }} {% if %}"},
      {"A\n  {% raw %}\nX {{ y }}\n  {% endraw %}\nB", "A\n\nX {{ y }}\nB"},
      {"A {%- raw -%}  X  {%- endraw -%}  B", "AXB"},
  });
}

TEST(ChatTemplateJinjaStatements, LoopChangedAndNeighbours) {
  ExpectRenders({
      {"{% for x in [1, 1, 2, 3, 3] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}",
       "123"},
      {"{% for x in 'abc' %}{{ loop.previtem is defined }}{{ loop.nextitem | default('-') }} {% "
       "endfor %}",
       "Falseb Truec True- "},
  });
}

TEST(ChatTemplateJinjaExpressions, PrefixedIntegerLiterals) {
  ExpectRenders({
      {"{{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 0X_ff }} {{ 1_000 }}", "31 15 5 255 1000"},
  });
}

TEST(ChatTemplateJinjaExpressions, UnknownFiltersPassInsideIfUntilUsed) {
  ExpectRenders({
      {"{% if false %}{{ x | from_json }}{% elif false %}{{ x is nosuchtest }}{% else %}ok{% endif "
       "%}",
       "ok"},
      {"{{ x | from_json if false else 'lazy' }}", "lazy"},
  });
}

TEST(ChatTemplateJinjaMethods, MoreStringMethods) {
  ExpectRenders({
      {"{{ 'a,b,c'.rsplit(',', 1) }} {{ '  a b  c '.rsplit(None, 1) }} {{ 'a.b.c'.rpartition('.') "
       "}} {{ 'a=b=c'.partition('=') }} {{ 'ab'.partition('x') }}",
       "['a,b', 'c'] ['  a b', 'c'] ('a.b', '.', 'c') ('a', '=', 'b=c') ('ab', '', '')"},
      {"{{ 'héllo'.rfind('l') }} {{ 'abc'.index('c') }} {{ 'abcabc'.rindex('b') }} {{ "
       "'tool_x'.removeprefix('tool_') }} {{ 'a.txt'.removesuffix('.txt') }}",
       "3 2 4 x a"},
      {"[{{ 'ab'.center(5) }}] [{{ 'ab'.center(6, '*') }}] [{{ 'é'.ljust(3, '.') }}] [{{ "
       "'ab'.rjust(4) }}] {{ '-5'.zfill(4) }} {{ 'abc'.zfill(2) }}",
       "[  ab ] [**ab**] [é..] [  ab] -005 abc"},
      {"{{ 'abc'.isalpha() }} {{ 'ab1'.isalpha() }} {{ '123'.isdigit() }} {{ '²'.isdigit() }} {{ "
       "'²'.isdecimal() }} {{ '½'.isnumeric() }} {{ 'a1'.isalnum() }} {{ ' \\t'.isspace() }} {{ "
       "''.isspace() }}",
       "True False True True False True True True False"},
      {"{{ 'abc'.islower() }} {{ 'aBc'.islower() }} {{ 'ABC1'.isupper() }} {{ '1'.isupper() }} {{ "
       "'Hello World'.istitle() }} {{ 'Hello world'.istitle() }} {{ 'é'.isascii() }} {{ 'Hello "
       "ß'.swapcase() }}",
       "True False True False True False False hELLO SS"},
  });
}

TEST(ChatTemplateJinjaMethods, StrFormat) {
  ExpectRenders({
      {"{{ '{} and {}'.format(1, 'b') }}|{{ '{1}{0}{1}'.format('a', 'b') }}|{{ "
       "'{name}!'.format(name='Bob') }}|{{ '{{literal}}'.format() }}",
       "1 and b|bab|Bob!|{literal}"},
      {"{{ '{0[0]}-{0[1]}'.format(['x', 'y']) }}|{{ '{d.k}/{d[k]}'.format(d={'k': 'v'}) }}|{{ "
       "'{!r}'.format('a') }}|{{ '{!a}'.format('é') }}",
       "x-y|v/v|'a'|'\\xe9'"},
      {"{{ '{:>5}|{:<5}|{:^5}|{:*^7}'.format('a', 'b', 'c', 'd') }}|{{ '{:.2}'.format('abcdef') }}",
       "    a|b    |  c  |***d***|ab"},
      {"{{ '{:5d}|{:+d}|{:05d}|{:x}|{:#X}|{:o}|{:b}|{:,}|{:_}'.format(42, 7, -42, 255, 255, 8, 5, "
       "1234567, 1234567) }}",
       "   42|+7|-0042|ff|0XFF|10|101|1,234,567|1_234_567"},
      {"{{ '{:.2f}|{:e}|{:.3g}|{:g}|{:%}|{:.1%}|{}|{:.3}|{:10.4f}|{:+.1f}'.format(3.14159, "
       "12345.678, 3.14159, 1e20, 0.25, 0.125, 1.0, 100.0, -2.5, 2.25) }}",
       "3.14|1.234568e+04|3.14|1e+20|25.000000%|12.5%|1.0|1e+02|   -2.5000|+2.2"},
      {"{{ '{}'.format(none) }}|{{ '{}'.format([1, 'a']) }}|{{ '{}'.format(true) }}|{{ "
       "'{:>3}'.format(true) }}|{{ '{:c}'.format(65) }}",
       "None|[1, 'a']|True|  1|A"},
  });
}

TEST(ChatTemplateJinjaExpressions, PercentFormat) {
  ExpectRenders({
      {"{{ '%s is %d' % ('x', 3) }}|{{ '%s' % 'y' }}|{{ '%d items' % 3 }}|{{ '%s' % [1] }}|{{ "
       "'%(a)s-%(b)r' % {'a': 1, 'b': 'q'} }}|{{ '100%%' % () }}",
       "x is 3|y|3 items|[1]|1-'q'|100%"},
      {"{{ '%5.1f|%-4d|%+d|% d|%05d|%.3d' % (3.14159, 2, 5, 7, -42, 7) }}|{{ '%x %X %#x %o %#o' % "
       "(255, 255, 255, 8, 8) }}",
       "  3.1|2   |+5| 7|-0042|007|ff FF 0xff 10 0o10"},
      {"{{ '%e|%.2E|%g|%g|%.3g|%c%c|%5s|%-5s|%.2s' % (12345.678, 0.5, 0.0001, 1e20, 3.14159, 65, "
       "'b', 'a', 'b', 'xyz') }}",
       "1.234568e+04|5.00E-01|0.0001|1e+20|3.14|Ab|    a|b    |xy"},
      {"{{ '%*d|%-*d|%.*f' % (4, 7, 3, 1, 2, 2.345) }}|{{ '%d' % 3.9 }}|{{ '%r %a' % ('é', 'é') }}",
       "   7|1  |2.35|3|'é' '\\xe9'"},
      {"{{ '%s, %s!' | format('Hello', 'World') }}|{{ '%(who)s' | format(who='me') }}|{{ '%.2f' | "
       "format(2) }}",
       "Hello, World!|me|2.00"},
  });
}

TEST(ChatTemplateJinjaFilters, MoreFilters) {
  ExpectRenders({
      {"[{{ 'abc' | center(7) }}] [{{ 'abc' | center(8) }}] {{ 'one two, three' | wordcount }} {{ "
       "'naïve_x 2' | wordcount }}",
       "[  abc  ] [  abc   ] 3 2"},
      {"{{ 'hello world foo' | truncate(9) }}|{{ 'hello world foo' | truncate(9, true) }}|{{ "
       "'hello world' | truncate(9, leeway=5) }}|{{ 'hello' | truncate(3, true, '..', 0) }}",
       "hello...|hello ...|hello world|h.."},
      {"{{ 'x' | truncate(9223372036854775807) }}|{{ 'abc' | truncate(3, "
       "leeway=9223372036854775807) }}",
       "x|abc"},
      {"{{ [1, 2, 3, 4, 5] | batch(2) | list }} {{ [1, 2, 3] | batch(2, 'x') | list }} {{ [1, 2, "
       "3, 4, 5] | slice(3) | list }} {{ [1, 2, 3, 4] | slice(3, 0) | list }}",
       "[[1, 2], [3, 4], [5]] [[1, 2], [3, 'x']] [[1, 2], [3, 4], [5]] [[1, 2], [3, 0], [4, 0]]"},
      {"{{ '<a>' | forceescape }} {{ '<a>' | e | e }}", "&lt;a&gt; &lt;a&gt;"},
  });
}

TEST(ChatTemplateJinjaFilters, MapAndSelectTakeFalseValuesAsEmpty) {
  ExpectRenders({
      {"{{ none | selectattr('x') | list }}{{ none | map(attribute='x') | list }}{{ none | "
       "rejectattr('x') | list }}{{ '' | select | list }}{{ 0 | reject | list }}",
       "[][][][][]"},
  });
}

TEST(ChatTemplateJinjaFilters, SafeTextEscapesPlainTextAddedToIt) {
  ExpectRenders(
      {
          {"{{ 'a<'|safe + '<b>' }}|{{ '<x>' + 'y'|safe }}|{{ '<'|safe ~ '<' }}|{{ ('<'|e) + '&' "
           "}}|{{ ('<'|safe|string) + '<' }}|{{ ['x'|safe] }}|{{ 'x'|safe == 'x' }}",
           "a<&lt;b&gt;|&lt;x&gt;y|<<|&lt;&amp;|<&lt;|[Markup('x')]|True"},
          {"{{ 'Use ' | safe + f.name + ': ' | safe + f | tojson }}",
           "Use a&lt;b: {&#34;name&#34;: &#34;a&lt;b&#34;, &#34;q&#34;: "
           "&#34;\\&#34;hi\\&#34;&#34;}"},
      },
      ordered_json::parse(R"({"f": {"name": "a<b", "q": "\"hi\""}})"));
}

TEST(ChatTemplateJinjaErrors, NewFeaturesFailClearly) {
  ExpectErrors({
      // Unknown filters and tests are syntax errors outside `if`, also in a loop inside one, and
      // errors when an `if` reaches them.
      {"{% if true %}{% for i in [1] %}{{ i | from_json }}{% endfor %}{% endif %}",
       "syntax error at line 1: unknown filter 'from_json'"},
      {"{% if true %}{{ 1 | from_json }}{% endif %}", "line 1: no filter named 'from_json'"},
      {"{% filter nosuch %}x{% endfilter %}", "unknown filter 'nosuch'"},
      {"{% call caller_less %}x{% endcall %}", "expected a macro call after 'call'"},
      {"{% call undefined_macro() %}x{% endcall %}", "'undefined_macro' is undefined"},
      {"{% macro m() %}{{ caller() }}{% endmacro %}{{ m() }}", "'caller' is undefined"},
      {"a\n{% raw %}never closed", "line 2: unexpected end of template: missing '{% endraw %}'"},
      {"{{ '{} {}'.format(1) }}", "Replacement index 1 out of range"},
      {"{{ '{0} {}'.format(1, 2) }}", "cannot switch from manual field specification"},
      {"{{ '{name}'.format(other=1) }}", "'name'"},
      {"{{ 'a { b'.format() }}", "expected '}' before end of string"},
      {"{{ 'a } b'.format() }}", "Single '}' encountered in format string"},
      {"{{ '{:d}'.format(1.5) }}", "Unknown format code 'd' for object of type 'float'"},
      {"{{ '{:+}'.format('a') }}", "Sign not allowed in string format specifier"},
      {"{{ '{:>5}'.format(none) }}", "unsupported format string passed to NoneType.__format__"},
      {"{{ '{:{w}}'.format(1, w=3) }}", "nested format fields are not supported"},
      {"{{ '%s %s' % (1,) }}", "not enough arguments for format string"},
      {"{{ '%s' % (1, 2) }}", "not all arguments converted during string formatting"},
      {"{{ '%d' % 'a' }}", "%d format: a real number is required, not str"},
      {"{{ '%x' % 1.5 }}", "%x format: an integer is required, not float"},
      {"{{ '%(a)s' % 1 }}", "format requires a mapping"},
      {"{{ '%(a)s' % {'b': 1} }}", "'a'"},
      {"{{ '%q' % 1 }}", "unsupported format character 'q'"},
      {"{{ '%d' % 1e300 }}", "does not fit a 64-bit integer"},
      {"{{ 'x' | format(1, a=2) }}", "can't handle positional and keyword arguments"},
      {"{{ 'abc'.index('z') }}", "substring not found"},
      {"{{ 'a'.center(3, 'xy') }}", "The fill character must be exactly one character long"},
      {"{{ 'a'.partition('') }}", "empty separator"},
      {"{{ [1] | batch(0) }}", "batch() needs a count of at least 1"},
      {"{{ [1] | slice(0) }}", "slice() needs at least 1 slice"},
      {"{{ [1] | batch(99999999, 0) }}", "list longer than 1000000 items"},
      {"{{ 'abcdef' | truncate(2) }}", "expected length >= 3, got 2"},
  });
}

}  // namespace
}  // namespace vllm
