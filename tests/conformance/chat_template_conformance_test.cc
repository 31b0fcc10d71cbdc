// Every chat case of every ../shared/tokenizers/<family>/expected.json must render, with the
// family's tokenizer_config.json chat_template, to exactly the text transformers'
// apply_chat_template produced; a case with an error must fail to render.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "chat_template/chat_template.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

ordered_json ReadJson(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ordered_json::parse(buffer.str());
}

// The template text: a string, or the entry named "default" of a list of {name, template}.
std::optional<std::string> ChatTemplateSource(const ordered_json& config) {
  auto found = config.find("chat_template");
  if (found == config.end()) return std::nullopt;
  if (found->is_string()) return found->get<std::string>();
  if (found->is_array()) {
    for (const auto& entry : *found) {
      if (entry.value("name", "") == "default") return entry.at("template").get<std::string>();
    }
  }
  return std::nullopt;
}

std::vector<fs::path> FamilyDirectories() {
  std::vector<fs::path> families;
  for (const auto& entry : fs::directory_iterator(fs::path(VLLM_SHARED_DIR) / "tokenizers")) {
    if (entry.is_directory()) families.push_back(entry.path());
  }
  std::sort(families.begin(), families.end());
  return families;
}

TEST(ChatTemplateConformance, RendersLikeTransformers) {
  int families_checked = 0;
  int cases_checked = 0;
  for (const fs::path& family : FamilyDirectories()) {
    SCOPED_TRACE(family.filename().string());
    if (!fs::exists(family / "tokenizer_config.json") || !fs::exists(family / "expected.json")) {
      continue;
    }
    std::optional<std::string> source =
        ChatTemplateSource(ReadJson(family / "tokenizer_config.json"));
    if (!source) continue;
    Expected<ChatTemplate> chat_template = ChatTemplate::Parse(*source);
    ASSERT_TRUE(chat_template.ok()) << chat_template.error();
    ++families_checked;

    ordered_json expected = ReadJson(family / "expected.json");
    int index = 0;
    for (const ordered_json& chat_case : expected.value("chat", ordered_json::array())) {
      SCOPED_TRACE("chat case " + std::to_string(index++));
      ordered_json variables = ordered_json::object();
      for (const auto& [key, value] : chat_case.items()) {
        if (key != "rendered" && key != "error") variables[key] = value;
      }
      Expected<std::string> rendered = chat_template->Render(variables);
      const ordered_json& error = chat_case.contains("error") ? chat_case["error"] : ordered_json();
      if (!error.is_null()) {
        EXPECT_FALSE(rendered.ok()) << "expected the error: " << error.dump();
        if (!rendered.ok()) {
          std::cout << "expected error: " << error.dump() << "\n  our error: " << rendered.error()
                    << "\n";
        }
      } else {
        ASSERT_TRUE(rendered.ok()) << rendered.error();
        EXPECT_EQ(*rendered, chat_case.at("rendered").get<std::string>());
      }
      ++cases_checked;
    }
  }
  std::cout << families_checked << " families, " << cases_checked << " chat cases checked\n";
  EXPECT_GT(families_checked, 0);
  EXPECT_GT(cases_checked, 0);
}

// Tools, an assistant's tool calls and a tool's result, as the chat server passes them (tool-call
// arguments parsed into objects, as vLLM does), render with Qwen3's template exactly as Python's
// jinja2 renders them (the reference text was produced with jinja2 3.1, as transformers runs it).
TEST(ChatTemplateConformance, Qwen3RendersToolsAndToolResults) {
  std::optional<std::string> source = ChatTemplateSource(
      ReadJson(fs::path(VLLM_SHARED_DIR) / "tokenizers/qwen3/tokenizer_config.json"));
  ASSERT_TRUE(source.has_value());
  Expected<ChatTemplate> chat_template = ChatTemplate::Parse(*source);
  ASSERT_TRUE(chat_template.ok()) << chat_template.error();
  const ordered_json variables = ordered_json::parse(R"({
    "tools": [{"type": "function", "function": {"name": "get_weather",
      "description": "The weather in a city", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    "messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "21 degrees"}],
    "add_generation_prompt": true, "bos_token": "", "eos_token": "<|im_end|>"})");
  Expected<std::string> rendered = chat_template->Render(variables);
  ASSERT_TRUE(rendered.ok()) << rendered.error();
  EXPECT_EQ(*rendered,
            "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the "
            "user query.\n\nYou are provided with function signatures within <tools></tools> XML "
            "tags:\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
            "\"description\": \"The weather in a city\", \"parameters\": {\"type\": \"object\", "
            "\"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}}\n"
            "</tools>\n\nFor each function call, return a json object with function name and "
            "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
            "<function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"
            "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
            "<|im_end|>\n<|im_start|>user\n<tool_response>\n21 degrees\n</tool_response>"
            "<|im_end|>\n<|im_start|>assistant\n");
}

}  // namespace
}  // namespace vllm
