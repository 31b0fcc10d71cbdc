// A slow-only Hugging Face directory: the demo model (stories260K) as config.json and
// model.safetensors with SentencePiece's tokenizer.model as its only tokenizer file (written from
// the GGUF's vocabulary) generates exactly what the GGUF generates, from the same text.
#include <gtest/gtest.h>

#include <fstream>

#include "common/temp_test_dir.h"
#include "engine/test_engine_args.h"
#include "formats/gguf_file.h"
#include "model/hf_export.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/test_sentencepiece_model.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

TEST(SentencePieceEngineTest, TokenizerModelOnlyDirectoryGeneratesLikeTheGguf) {
  TempTestDir dir("spm_engine");
  const std::string model_dir = dir.File("model");
  {
    auto file = GgufFile::Open(StoriesArgs().model);
    ASSERT_TRUE(file.ok()) << file.error();
    // A tokenizer directory with no tokenizer files: nothing is copied beside the weights.
    Status exported = WriteHfCheckpointFromGguf(**file, model_dir, dir.File("no_tokenizer"));
    ASSERT_TRUE(exported.ok()) << exported.message();
    auto vocab = LoadGgufVocab(**file);
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    std::ofstream(model_dir + "/tokenizer.model", std::ios::binary)
        << test::SentencePieceModelFromVocab(*vocab, SentencePieceModel::Type::kBpe);
  }
  ASSERT_FALSE(std::filesystem::exists(model_dir + "/tokenizer.json"));
  const std::vector<std::string> prompts = {"Once upon a time", "Lily and Tom 😀 went"};
  std::vector<RequestOutput> from_gguf;
  {
    LLM llm(StoriesArgs());
    from_gguf = llm.Generate(prompts, Greedy(40), false);
  }
  for (const char* mode : {"auto", "slow"}) {
    EngineArgs args = TestArgs(model_dir);
    args.tokenizer_mode = mode;
    LLM llm(args);
    auto from_dir = llm.Generate(prompts, Greedy(40), false);
    ASSERT_EQ(from_dir.size(), prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      EXPECT_EQ(from_dir[i].prompt_token_ids, from_gguf[i].prompt_token_ids) << mode << " " << i;
      EXPECT_EQ(from_dir[i].outputs[0].token_ids, from_gguf[i].outputs[0].token_ids) << mode;
      EXPECT_EQ(from_dir[i].outputs[0].text, from_gguf[i].outputs[0].text) << mode;
    }
  }
}

}  // namespace
}  // namespace vllm
