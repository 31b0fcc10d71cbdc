#include "cli/tokenize_command.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "cli/loaded_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace vllm {
namespace {

struct TokenizeOptions {
  std::string model_path;
  std::string tokenizer_dir;  // a Hugging Face tokenizer directory, instead of model_path
  std::string text;
  std::string text_file;
  bool add_special_tokens = false;
};

// A JSON array as Python's json.dumps writes it: "[1, 403, 407]".
std::string FormatIdArray(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

int Run(const TokenizeOptions& options) {
  std::string text = options.text;
  if (!options.text_file.empty()) {
    std::ifstream in(options.text_file, std::ios::binary);
    if (!in) {
      std::cerr << "error: cannot read '" << options.text_file << "'\n";
      return 1;
    }
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto loaded = LoadTokenizer(options.model_path, options.tokenizer_dir);
  if (!loaded) {
    std::cerr << "error: " << loaded.error() << "\n";
    return 1;
  }
  std::cout << FormatIdArray(loaded->tokenizer->Encode(text, options.add_special_tokens))
            << std::endl;
  return 0;
}

}  // namespace

void RegisterTokenizeCommand(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* command = app.add_subcommand("tokenize", "Print a text's token ids as a JSON array");
  auto* model =
      command->add_option("-m,--model", options->model_path, "GGUF model or vocabulary file");
  auto* tokenizer = command->add_option(
      "--tokenizer", options->tokenizer_dir,
      "Hugging Face tokenizer directory (tokenizer.json, tekken.json or tokenizer.model, "
      "tokenizer_config.json)");
  model->excludes(tokenizer);
  command->add_flag("--add-special-tokens", options->add_special_tokens,
                    "Add BOS/EOS as the vocabulary asks");
  auto* text = command->add_option("--text", options->text, "Text to tokenize");
  auto* text_file = command->add_option("--text-file", options->text_file, "File to tokenize");
  text->excludes(text_file);
  command->callback([options] { std::exit(Run(*options)); });
}

}  // namespace vllm
