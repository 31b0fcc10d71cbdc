// Renders a parsed template: runs its statements, evaluates its expressions and keeps its
// variable scopes with Jinja's rules (a loop body or macro call sees the variables around it, and
// what it sets stays inside; `if` opens no scope).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "chat_template/ast.h"
#include "chat_template/value.h"

namespace vllm::jinja {

// Renders within `budget`, which the rendering spends. Throws RenderError (its line filled in) or,
// from raise_exception(), RaisedException.
std::string RenderTemplate(const Template& tmpl,
                           std::vector<std::pair<std::string, Value>> variables,
                           RenderBudget& budget);

}  // namespace vllm::jinja
