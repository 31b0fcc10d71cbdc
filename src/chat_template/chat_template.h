// A model's chat template (tokenizer_config.json's "chat_template"), rendered the way
// transformers' apply_chat_template renders it: Jinja2 with trim_blocks and lstrip_blocks, a
// tojson filter that keeps non-ASCII text and writes ", " and ": " separators, and the globals
// raise_exception(message) and strftime_now(format). The Jinja subset is the one real Hugging
// Face chat templates use; see parser.h for the grammar and filters.h, predicates.h, methods.h
// and builtins.h for what templates can call.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace vllm {

namespace jinja {
struct Template;
}  // namespace jinja

class ChatTemplate {
 public:
  // Bounds on one rendering, so that a template (which a request may bring) cannot exhaust
  // memory or time: reaching one ends the rendering with an Error naming it. The defaults suit
  // the model's own template; a server rendering templates from requests should set tighter ones.
  struct RenderLimits {
    // Longest string the template may build, in bytes: the rendered output, and every string made
    // on the way (a macro's or a block set's output, 'ab' * n, ~ and +, join, replace, indent,
    // tojson, a printed list...). Where the size is known beforehand, as in 'ab' * n, it is
    // checked before anything is allocated. Strings in `variables` may be longer; printing one is
    // then an error.
    size_t max_output_bytes = size_t{64} << 20;
    // Most steps. A step is a loop iteration (or an item that `for ... if` tests), a macro call,
    // an item that a filter, method or builtin walks through (join, map, select, sum,
    // str.join, list.extend, dict()...), or a pair of values compared (==, `in`, sort, unique,
    // min, max, list.index..., one per item when lists are compared). This bounds how many units
    // of work a template does, not how long each takes (up to a string or list at its limit):
    // max_duration bounds the time.
    int64_t max_steps = 1'000'000;
    // Longest time a rendering may take, counted from the call of Render; unset: no limit. The
    // clock is read at every 32nd step.
    std::optional<std::chrono::milliseconds> max_duration;
  };

  // Parses a template; a syntax error gives an Error naming the problem and its line.
  static Expected<ChatTemplate> Parse(std::string_view source);

  // Renders with `variables`, a JSON object whose members become the template's variables:
  // messages, add_generation_prompt, bos_token, eos_token, tools, any chat_template_kwargs.
  // The parameter is an ordered_json so that dicts keep their key order, which tojson prints;
  // a plain nlohmann::json converts to it implicitly (with its keys sorted).
  // raise_exception("msg") in the template gives Error{"msg"} exactly; any other problem
  // (calling something undefined, operands of the wrong types, a limit reached) gives an Error
  // naming it and its line. Never throws. Renderings may run concurrently, each with its own
  // limits; this one has the default RenderLimits.
  Expected<std::string> Render(const nlohmann::ordered_json& variables) const;
  Expected<std::string> Render(const nlohmann::ordered_json& variables,
                               const RenderLimits& limits) const;

 private:
  explicit ChatTemplate(std::shared_ptr<const jinja::Template> tmpl) : template_(std::move(tmpl)) {}

  std::shared_ptr<const jinja::Template> template_;
};

}  // namespace vllm
