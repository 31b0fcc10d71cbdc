// Writes the converters' fuzzer seeds (fuzz_layer.h) into the directory named by its argument:
// a tiny layer [32, 64] in each of make-random-model's quantized formats and their variants, and
// an unquantized BF16 layer under --quantization fp8 (quantized at load).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "common/half.h"
#include "model/hf_quant/fuzz/fuzz_layer.h"

namespace vllm {
namespace {

constexpr int64_t kRows = 32, kCols = 64;

struct SeedCase {
  const char* format;
  int bits = 0;
  int64_t group_size = 0;
  bool asym = false;
};
constexpr SeedCase kCases[] = {{"gptq", 4, 32},
                               {"gptq", 3, 32, true},
                               {"gptq", 2, -1},
                               {"gptq", 8, 32, true},
                               {"gptq-act", 4, 32},
                               {"gptq-v2", 4, 32, true},
                               {"awq", 0, 32},
                               {"awq-gemv", 0, 32},
                               {"fp8"},
                               {"fp8-block"},
                               {"w8a8"},
                               {"w4a16", 4, 32},
                               {"w4a16", 8, 32, true},
                               {"ct-fp8"},
                               {"ct-fp8-tensor"},
                               {"bnb-nf4"},
                               {"bnb-fp4"},
                               {"bnb-int8"}};

Status WriteSeed(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) return Error{"cannot write " + path};
  return Status::Ok();
}

Status WriteSeeds(const std::string& directory) {
  std::mt19937 generator(1);
  std::normal_distribution<float> normal(0.01f, 0.1f);
  std::vector<float> weight(kRows * kCols);
  for (float& value : weight) value = normal(generator);
  const std::string module = kFuzzedModule;
  for (const SeedCase& seed : kCases) {
    auto options = MakeHfQuantWriterOptions(seed.format, seed.bits, seed.group_size, seed.asym, 1);
    if (!options) return options.status();
    auto layer = QuantizeHfLinear(*options, module, weight.data(), kRows, kCols);
    if (!layer) return layer.status();
    const nlohmann::json config = {{"quantization_config", HfQuantizationConfigJson(*options)}};
    auto input = EncodeFuzzedLayer(0, config.dump(), layer->tensors);
    if (!input) return input.status();
    std::string name = seed.format;
    if (seed.bits != 0) name += "-b" + std::to_string(seed.bits);
    if (seed.group_size != 0) name += "-g" + std::to_string(seed.group_size);
    if (seed.asym) name += "-asym";
    VLLM_RETURN_IF_ERROR(WriteSeed(directory + "/" + name + ".seed", *input));
  }
  std::vector<uint16_t> halves(weight.size());
  for (size_t i = 0; i < weight.size(); ++i) halves[i] = Fp32ToBf16(weight[i]);
  WrittenTensor bf16{module + ".weight", GgmlType::kBF16, "BF16", {kRows, kCols}, {}};
  bf16.bytes.resize(halves.size() * sizeof(uint16_t));
  std::memcpy(bf16.bytes.data(), halves.data(), bf16.bytes.size());
  const auto fp8_request = static_cast<size_t>(
      std::find(std::begin(kFuzzedRequests), std::end(kFuzzedRequests), std::string("fp8")) -
      std::begin(kFuzzedRequests));
  auto input = EncodeFuzzedLayer(fp8_request, R"({"model_type": "llama"})", {bf16});
  if (!input) return input.status();
  return WriteSeed(directory + "/fp8-at-load.seed", *input);
}

}  // namespace
}  // namespace vllm

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SEED_DIRECTORY\n", argv[0]);
    return 2;
  }
  const vllm::Status status = vllm::WriteSeeds(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
