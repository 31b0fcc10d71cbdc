// A model's chat template (tokenizer_config.json's "chat_template"), rendered the way
// transformers' apply_chat_template renders it: Jinja2 with trim_blocks and lstrip_blocks, a
// tojson filter that keeps non-ASCII text and writes ", " and ": " separators, and the globals
// raise_exception(message) and strftime_now(format). The Jinja subset is the one real Hugging
// Face chat templates use; see parser.h for the grammar and filters.h, predicates.h, methods.h
// and builtins.h for what templates can call.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace vllm {

namespace jinja {
struct Template;
}  // namespace jinja

class ChatTemplate {
 public:
  // Parses a template; a syntax error gives an Error naming the problem and its line.
  static Expected<ChatTemplate> Parse(std::string_view source);

  // Renders with `variables`, a JSON object whose members become the template's variables:
  // messages, add_generation_prompt, bos_token, eos_token, tools, any chat_template_kwargs.
  // The parameter is an ordered_json so that dicts keep their key order, which tojson prints;
  // a plain nlohmann::json converts to it implicitly (with its keys sorted).
  // raise_exception("msg") in the template gives Error{"msg"} exactly; any other problem
  // (calling something undefined, operands of the wrong types, a limit reached) gives an Error
  // naming it and its line. Never throws. Renderings may run concurrently.
  Expected<std::string> Render(const nlohmann::ordered_json& variables) const;

 private:
  explicit ChatTemplate(std::shared_ptr<const jinja::Template> tmpl) : template_(std::move(tmpl)) {}

  std::shared_ptr<const jinja::Template> template_;
};

}  // namespace vllm
