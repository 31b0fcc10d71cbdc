#include "cli/make_random_model_command.h"

#include <iostream>
#include <memory>

#include "model/random_model.h"

namespace vllm {

void RegisterMakeRandomModelCommand(CLI::App& app) {
  auto options = std::make_shared<RandomModelOptions>();
  auto dtype_name = std::make_shared<std::string>("f32");
  CLI::App* command = app.add_subcommand(
      "make-random-model", "Write a random-weight Llama GGUF of a real model's shape");
  std::string shapes;
  for (const auto& shape : KnownModelShapes()) shapes += (shapes.empty() ? "" : "|") + shape.name;
  command->add_option("--shape", options->shape, "Model shape: " + shapes)->required();
  command->add_option("--dtype", *dtype_name, "f32|f16|bf16|q8_0|q4_0")->capture_default_str();
  command->add_option("--vocab", options->vocab_path, "GGUF whose tokenizer metadata is copied")
      ->required();
  command->add_option("--out", options->output_path, "Output .gguf path")->required();
  command->add_option("--seed", options->seed, "Weights seed")->capture_default_str();
  command->add_option("--num-layers", options->num_layers_override,
                      "Override the shape's layer count");
  command->callback([options, dtype_name] {
    auto dtype = ParseGgmlType(*dtype_name);
    if (!dtype) {
      std::cerr << "error: unknown --dtype '" << *dtype_name << "' (f32|f16|bf16|q8_0|q4_0)\n";
      std::exit(1);
    }
    options->dtype = *dtype;
    Status status = WriteRandomModel(*options);
    if (!status.ok()) {
      std::cerr << "error: " << status.message() << "\n";
      std::exit(1);
    }
    std::cerr << "wrote " << options->output_path << "\n";
  });
}

}  // namespace vllm
