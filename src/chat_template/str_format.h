// Python's two ways of filling a string with values: printf-style `format % args` (the `%`
// operator on a string, and Jinja's format filter) and str.format(*args, **kwargs).
#pragma once

#include <string>
#include <string_view>

#include "chat_template/value.h"

namespace vllm::jinja {

// `format % args`: a tuple gives one value per conversion, a dict the values of %(name)s
// conversions, and anything else is the one value. Conversions: %s %r %a %d %i %u %x %X %o %e
// %E %f %F %g %G %c %%, with flags (-+ 0#), width and precision (or *). Throws RenderError where
// Python raises TypeError or ValueError.
std::string PercentFormat(std::string_view format, const Value& args, const RenderBudget& budget);

// format.format(*args, **kwargs): fields {}, {0} and {name}, followed by .attribute and [key]
// lookups, a !s, !r or !a conversion and a :spec (format_spec.h). Throws RenderError where
// Python raises; a spec with a nested {field} is not supported.
std::string BraceFormat(std::string_view format, const CallArgs& args, const RenderBudget& budget);

}  // namespace vllm::jinja
