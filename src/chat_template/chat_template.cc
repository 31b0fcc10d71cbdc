// ChatTemplate: the engine's exceptions become vllm::Error here, and nothing else escapes.
#include "chat_template/chat_template.h"

#include <exception>
#include <new>
#include <string>

#include "chat_template/ast.h"
#include "chat_template/errors.h"
#include "chat_template/interpreter.h"
#include "chat_template/json_value.h"
#include "chat_template/limits.h"
#include "chat_template/parser.h"

namespace vllm {
namespace {

// The Error of the exception being handled, one not the engine's own, thrown while `doing`.
Error ErrorOfOtherException(const char* doing) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return Error{std::string("chat template: out of memory while ") + doing};
  } catch (const std::exception& error) {
    return Error{std::string("chat template: ") + error.what()};
  } catch (...) {
    return Error{std::string("chat template: unknown error while ") + doing};
  }
}

}  // namespace

Expected<ChatTemplate> ChatTemplate::Parse(std::string_view source) {
  try {
    return ChatTemplate(std::make_shared<const jinja::Template>(jinja::ParseTemplate(source)));
  } catch (const jinja::SyntaxError& error) {
    return Error{"chat template syntax error at line " + std::to_string(error.line()) + ": " +
                 error.what()};
  } catch (...) {
    return ErrorOfOtherException("parsing");
  }
}

Expected<std::string> ChatTemplate::Render(const nlohmann::ordered_json& variables) const {
  return Render(variables, RenderLimits{});
}

Expected<std::string> ChatTemplate::Render(const nlohmann::ordered_json& variables,
                                           const RenderLimits& limits) const {
  try {
    jinja::RenderBudget budget(limits.max_output_bytes, limits.max_steps, limits.max_duration);
    if (!variables.is_object()) return Error{"chat template variables must be a JSON object"};
    std::vector<std::pair<std::string, jinja::Value>> bound;
    bound.reserve(variables.size());
    for (const auto& [name, value] : variables.items()) {
      bound.emplace_back(name, jinja::ValueFromJson(value));
    }
    return jinja::RenderTemplate(*template_, std::move(bound), budget);
  } catch (const jinja::RaisedException& exception) {
    return Error{exception.what()};
  } catch (const jinja::RenderError& error) {
    std::string where = error.line > 0 ? " at line " + std::to_string(error.line) : "";
    return Error{"chat template error" + where + ": " + error.what()};
  } catch (...) {
    return ErrorOfOtherException("rendering");
  }
}

}  // namespace vllm
