#include "server/openai/chat/tools.h"

#include <random>

namespace vllm::server {
namespace {

constexpr char kParam[] = "tool_choice";

// A function's parameters schema; a function without one takes an empty object.
Json ParametersOf(const Json& function) {
  auto parameters = function.find("parameters");
  if (parameters == function.end() || parameters->is_null()) {
    return {{"type", "object"}, {"properties", Json::object()}};
  }
  return *parameters;
}

std::optional<ApiError> CheckTools(const Json& tools) {
  if (!tools.is_array()) return ApiError::BadRequest("tools: Input should be a list", "tools");
  for (const Json& tool : tools) {
    if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object() ||
        !tool["function"].contains("name") || !tool["function"]["name"].is_string()) {
      return ApiError::BadRequest("tools: each tool needs a function with a string name", "tools");
    }
    if (tool.contains("type") && tool["type"] != "function") {
      return ApiError::BadRequest("tools: a tool's type must be \"function\"", "tools");
    }
    if (auto parameters = tool["function"].find("parameters");
        parameters != tool["function"].end() && !parameters->is_null() &&
        !parameters->is_object()) {
      return ApiError::BadRequest("tools: a function's parameters must be a JSON schema object",
                                  "tools");
    }
  }
  return std::nullopt;
}

// vLLM's schema for tool_choice "required": a non-empty array of {name, parameters} objects, one
// branch per tool, with every tool's $defs merged at the top.
Expected<Json> RequiredToolsSchema(const Json& tools, bool parallel_tool_calls) {
  Json branches = Json::array();
  Json defs = Json::object();
  for (const Json& tool : tools) {
    const Json& function = tool["function"];
    Json parameters = ParametersOf(function);
    if (auto tool_defs = parameters.find("$defs"); tool_defs != parameters.end()) {
      if (!tool_defs->is_object()) return Error{"tools: $defs must be an object"};
      for (const auto& [name, schema] : tool_defs->items()) {
        if (defs.contains(name) && defs[name] != schema) {
          return Error{"Tool definition '" + name +
                       "' has multiple schemas, which is not supported."};
        }
        defs[name] = schema;
      }
      parameters.erase("$defs");
    }
    branches.push_back({{"properties",
                         {{"name", {{"type", "string"}, {"enum", Json::array({function["name"]})}}},
                          {"parameters", std::move(parameters)}}},
                        {"required", Json::array({"name", "parameters"})}});
  }
  Json schema = {{"type", "array"},
                 {"minItems", 1},
                 {"items", {{"type", "object"}, {"anyOf", std::move(branches)}}}};
  if (!parallel_tool_calls) schema["maxItems"] = 1;
  if (!defs.empty()) schema["$defs"] = std::move(defs);
  return schema;
}

}  // namespace

std::optional<ApiError> ParseChatTools(const Json& body, bool auto_tool_choice,
                                       SamplingParams* params, ChatTools* tools) {
  const Json* tool_list = nullptr;
  if (auto it = body.find("tools"); it != body.end() && !it->is_null()) {
    if (auto error = CheckTools(*it)) return error;
    if (!it->empty()) tool_list = &*it;
  }
  if (auto error = ReadField(body, "parallel_tool_calls", GetBool, &tools->parallel_tool_calls)) {
    return error;
  }
  // vLLM's tool_choice defaults to "auto" when tools are given, else "none".
  tools->choice = tool_list != nullptr ? ToolChoiceKind::kAuto : ToolChoiceKind::kNone;
  if (auto choice = body.find(kParam); choice != body.end() && !choice->is_null()) {
    if (choice->is_string()) {
      const std::string name = choice->get<std::string>();
      if (name == "none") {
        tools->choice = ToolChoiceKind::kNone;
      } else if (name == "auto") {
        tools->choice = ToolChoiceKind::kAuto;
      } else if (name == "required") {
        tools->choice = ToolChoiceKind::kRequired;
      } else {
        return ApiError::BadRequest(
            "tool_choice must be \"none\", \"auto\", \"required\" or a named function", kParam);
      }
    } else if (choice->is_object() && choice->contains("function") &&
               (*choice)["function"].is_object() && (*choice)["function"].contains("name") &&
               (*choice)["function"]["name"].is_string()) {
      tools->choice = ToolChoiceKind::kNamed;
      tools->function_name = (*choice)["function"]["name"].get<std::string>();
    } else {
      return ApiError::BadRequest("tool_choice: a named tool choice needs function.name", kParam);
    }
    if (tools->choice != ToolChoiceKind::kNone && tool_list == nullptr) {
      return ApiError::BadRequest("When using `tool_choice`, `tools` must be set.", kParam);
    }
  }
  if (tools->choice == ToolChoiceKind::kAuto && !auto_tool_choice) {
    return ApiError::BadRequest(
        "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
        kParam);
  }
  if (tools->choice != ToolChoiceKind::kRequired && tools->choice != ToolChoiceKind::kNamed) {
    return std::nullopt;
  }
  if (params->structured_outputs) {
    return ApiError::BadRequest(
        "A tool_choice of \"required\" or a named function constrains the output itself; it "
        "cannot be combined with response_format or structured_outputs.",
        kParam);
  }
  Json schema;
  if (tools->choice == ToolChoiceKind::kNamed) {
    const Json* function = nullptr;
    for (const Json& tool : *tool_list) {
      if (tool["function"]["name"] == tools->function_name) function = &tool["function"];
    }
    if (function == nullptr) {
      return ApiError::BadRequest(
          "Tool '" + tools->function_name + "' has not been passed in `tools`.", kParam);
    }
    schema = ParametersOf(*function);
  } else {
    auto required = RequiredToolsSchema(*tool_list, tools->parallel_tool_calls);
    if (!required) return ApiError::BadRequest(required.error(), "tools");
    schema = std::move(*required);
  }
  params->structured_outputs.emplace();
  params->structured_outputs->json = DumpJson(schema);
  return std::nullopt;
}

std::string MakeToolCallId() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "chatcmpl-tool-";
  for (int i = 0; i < 32; ++i) id += kHex[generator() % 16];
  return id;
}

}  // namespace vllm::server
