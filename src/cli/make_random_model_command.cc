#include "cli/make_random_model_command.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "model/hf_export.h"
#include "model/random_encoder.h"
#include "model/random_model.h"

namespace vllm {
namespace {

// --quantization and its options: the quantized checkpoint layout of a model directory.
struct HfQuantizationFlags {
  std::string format;  // empty: unquantized
  int bits = 0;
  int64_t group_size = 0;
  bool asym = false;
  std::string dequantized_dir;
};

// The random GGUF, written to a temporary file, then rewritten as a model directory (quantized
// when flags.format is set).
Status WriteHfDirectory(RandomModelOptions options, const std::string& tokenizer_dir,
                        const HfQuantizationFlags& flags) {
  std::optional<HfQuantWriterOptions> quantization;
  if (!flags.format.empty()) {
    auto parsed = MakeHfQuantWriterOptions(flags.format, flags.bits, flags.group_size, flags.asym,
                                           options.seed);
    if (!parsed) return parsed.status();
    quantization = *parsed;
  } else if (flags.bits != 0 || flags.group_size != 0 || flags.asym ||
             !flags.dequantized_dir.empty()) {
    return Error{"--bits, --group-size, --asym and --dequantized-out need --quantization"};
  }
  const std::string directory = options.output_path;
  options.output_path = directory + ".tmp.gguf";
  VLLM_RETURN_IF_ERROR(WriteRandomModel(options));
  Status status = Status::Ok();
  {
    auto file = GgufFile::Open(options.output_path);
    if (!file) {
      status = file.status();
    } else if (quantization) {
      status = WriteQuantizedHfCheckpointFromGguf(**file, directory, tokenizer_dir, *quantization,
                                                  flags.dequantized_dir);
    } else {
      status = WriteHfCheckpointFromGguf(**file, directory, tokenizer_dir);
    }
  }
  std::remove(options.output_path.c_str());
  return status;
}

}  // namespace

void RegisterMakeRandomModelCommand(CLI::App& app) {
  auto options = std::make_shared<RandomModelOptions>();
  auto hf_tokenizer = std::make_shared<std::string>();
  auto quantization = std::make_shared<HfQuantizationFlags>();
  CLI::App* command = app.add_subcommand(
      "make-random-model", "Write a random-weight Llama GGUF of a real model's shape");
  std::string shapes;
  for (const auto& shape : KnownModelShapes()) shapes += (shapes.empty() ? "" : "|") + shape.name;
  for (const auto& shape : KnownEncoderShapes()) shapes += "|" + shape.name;
  command->add_option("--shape", options->shape, "Model shape: " + shapes)->required();
  CLI::Option* dtype =
      command
          ->add_option("--dtype", options->dtype,
                       "Matrices' type: " + SupportedTypeNames() +
                           ", or a mix as llama.cpp's quantizer writes it: q4_k_m, q5_k_m, "
                           "q4_k_s, mxfp4_moe (MXFP4 experts, BF16 elsewhere); with "
                           "--quantization, the unquantized tensors' type (default bf16, as "
                           "quantized checkpoints store them)")
          ->capture_default_str();
  command->add_option("--vocab", options->vocab_path, "GGUF whose tokenizer metadata is copied")
      ->required();
  command->add_option("--out", options->output_path, "Output .gguf path")->required();
  command->add_option("--hf-dir", *hf_tokenizer,
                      "Instead of a GGUF, write a Hugging Face directory at --out (config.json, "
                      "model.safetensors) with this tokenizer directory's files (f32|f16|bf16)");
  command->add_option("--quantization", quantization->format,
                      std::string("With --hf-dir: write the decoder's linear layers as a quantized "
                                  "checkpoint: ") +
                          HfQuantFormatNames());
  command->add_option("--bits", quantization->bits,
                      "Bits of gptq / gptq-act / gptq-v2 (2, 3, 4, 8) or w4a16 (4, 8)");
  command->add_option("--group-size", quantization->group_size,
                      "Values per scale of gptq, gptq-act, gptq-v2, awq, awq-gemv, w4a16 (-1: a "
                      "whole row)");
  command->add_flag("--asym", quantization->asym, "gptq / gptq-v2 / w4a16 with zero points");
  command->add_option("--dequantized-out", quantization->dequantized_dir,
                      "With --quantization: also write the model with every quantized weight "
                      "replaced by its exact dequantized values (F32) to this directory");
  command->add_option("--seed", options->seed, "Weights seed")->capture_default_str();
  command->add_option("--num-layers", options->num_layers_override,
                      "Override the shape's layer count");
  command
      ->add_option("--residual-scale", options->residual_scale,
                   "Scale of the matrices writing into the residual stream (attn_output, "
                   "ffn_down) of a decoder: below 1, a --num-layers cut of the model with the same "
                   "seed predicts its tokens, a draft model for speculative decoding")
      ->check(CLI::Range(1e-6f, 1e6f))
      ->capture_default_str();
  command->callback([options, hf_tokenizer, quantization, dtype] {
    if (!quantization->format.empty() && dtype->count() == 0) options->dtype = "bf16";
    Status status;
    if (!hf_tokenizer->empty()) {
      status = WriteHfDirectory(*options, *hf_tokenizer, *quantization);
    } else if (!quantization->format.empty() || !quantization->dequantized_dir.empty()) {
      status = Error{"--quantization writes a model directory: it needs --hf-dir"};
    } else {
      status = WriteRandomModel(*options);
    }
    if (!status.ok()) {
      std::cerr << "error: " << status.message() << "\n";
      std::exit(1);
    }
    std::cerr << "wrote " << options->output_path << "\n";
  });
}

}  // namespace vllm
