// ChatTemplate: the engine's exceptions become vllm::Error here, and nothing else escapes.
#include "chat_template/chat_template.h"

#include <exception>
#include <new>

#include "chat_template/ast.h"
#include "chat_template/errors.h"
#include "chat_template/interpreter.h"
#include "chat_template/json_value.h"
#include "chat_template/limits.h"
#include "chat_template/parser.h"

namespace vllm {

Expected<ChatTemplate> ChatTemplate::Parse(std::string_view source) {
  try {
    return ChatTemplate(std::make_shared<const jinja::Template>(jinja::ParseTemplate(source)));
  } catch (const jinja::SyntaxError& error) {
    return Error{"chat template syntax error at line " + std::to_string(error.line()) + ": " +
                 error.what()};
  } catch (const std::bad_alloc&) {
    return Error{"chat template: out of memory while parsing"};
  } catch (const std::exception& error) {
    return Error{std::string("chat template: ") + error.what()};
  } catch (...) {
    return Error{"chat template: unknown error while parsing"};
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
  } catch (const std::bad_alloc&) {
    return Error{"chat template: out of memory while rendering"};
  } catch (const std::exception& error) {
    return Error{std::string("chat template: ") + error.what()};
  } catch (...) {
    return Error{"chat template: unknown error while rendering"};
  }
}

}  // namespace vllm
