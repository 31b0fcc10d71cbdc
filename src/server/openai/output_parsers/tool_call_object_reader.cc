// ToolCallObjectReader: a small state machine over the call object's keys, with a
// JsonNormalizer reading each key and value.
#include "server/openai/output_parsers/tool_call_object_reader.h"

#include <algorithm>

#include "server/openai/output_parsers/text_markers.h"

namespace vllm::server {

size_t ToolCallObjectReader::Feed(std::string_view text) {
  size_t used = 0;
  while (used < text.size() && step_ != Step::kDone && step_ != Step::kFailed) {
    const char c = text[used];
    switch (step_) {
      case Step::kOpen:
        if (c == '{') {
          step_ = Step::kFirstKeyOrEnd;
        } else if (!IsJsonSpace(c)) {
          step_ = Step::kFailed;
          return used;
        }
        ++used;
        break;
      case Step::kFirstKeyOrEnd:
      case Step::kKey:
        if (c == '}' && step_ == Step::kFirstKeyOrEnd) {
          ++used;
          Close();
        } else if (IsJsonSpace(c)) {
          ++used;
        } else if (!StartKey(c)) {
          return used;
        }
        break;
      case Step::kKeyString:
        used += json_.Feed(text.substr(used), &key_);
        if (json_.state() == JsonNormalizer::State::kDone) EndKey();
        if (json_.state() == JsonNormalizer::State::kFailed) step_ = Step::kFailed;
        break;
      case Step::kColon:
        if (c == ':') {
          step_ = Step::kValue;
          json_ = JsonNormalizer();
        } else if (!IsJsonSpace(c)) {
          step_ = Step::kFailed;
          return used;
        }
        ++used;
        break;
      case Step::kValue: {
        std::string* out = field_ == Field::kName        ? &name_text_
                           : field_ == Field::kArguments ? &arguments_
                                                         : &skipped_;
        used += json_.Feed(text.substr(used), out);
        if (field_ == Field::kName && !name_text_.empty() && name_text_[0] != '"') {
          step_ = Step::kFailed;  // the name must be a string
          break;
        }
        if (json_.state() == JsonNormalizer::State::kDone) EndValue();
        if (json_.state() == JsonNormalizer::State::kFailed) step_ = Step::kFailed;
        break;
      }
      case Step::kCommaOrEnd:
        if (c == ',') {
          step_ = Step::kKey;
        } else if (c == '}') {
          Close();
        } else if (!IsJsonSpace(c)) {
          step_ = Step::kFailed;
          return used;
        }
        ++used;
        break;
      case Step::kDone:
      case Step::kFailed:
        break;
    }
  }
  skipped_.clear();
  return used;
}

void ToolCallObjectReader::Finish() {
  if (step_ == Step::kValue && field_ == Field::kArguments) json_.Finish(&arguments_);
}

bool ToolCallObjectReader::StartKey(char c) {
  if (c != '"') {
    step_ = Step::kFailed;
    return false;
  }
  key_.clear();
  json_ = JsonNormalizer();
  step_ = Step::kKeyString;
  return true;
}

void ToolCallObjectReader::EndKey() {
  const std::string key = DecodeJsonString(key_);
  const bool is_arguments_key =
      std::find(options_.argument_keys.begin(), options_.argument_keys.end(), key) !=
      options_.argument_keys.end();
  field_ = Field::kOther;
  if (key == "name") {
    if (name_.has_value() || !name_text_.empty()) {
      step_ = Step::kFailed;  // a repeated name
      return;
    }
    field_ = Field::kName;
  } else if (is_arguments_key) {
    if (key == arguments_key_) {
      step_ = Step::kFailed;  // repeated arguments
      return;
    }
    if (arguments_key_.empty()) {
      arguments_key_ = key;
      field_ = Field::kArguments;
    }
  }
  step_ = Step::kColon;
}

void ToolCallObjectReader::EndValue() {
  if (field_ == Field::kName) name_ = DecodeJsonString(name_text_);
  step_ = Step::kCommaOrEnd;
}

void ToolCallObjectReader::Close() {
  const bool has_arguments = !arguments_key_.empty();
  if (!name_.has_value() || (!has_arguments && options_.arguments_required)) {
    step_ = Step::kFailed;
    return;
  }
  if (!has_arguments) arguments_ = "{}";
  step_ = Step::kDone;
}

}  // namespace vllm::server
