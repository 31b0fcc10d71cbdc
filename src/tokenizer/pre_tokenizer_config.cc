#include "tokenizer/pre_tokenizer_config.h"

namespace vllm {
namespace {

struct NamedConfig {
  std::vector<std::string> names;
  PreTokenizerConfig config;
};

// GPT-2's pattern, the base of many others.
constexpr char kGpt2[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
// Llama 3's pattern, with the case-insensitive contractions spelled out.
constexpr char kLlama3[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen 2's pattern: Llama 3's with single digits.
constexpr char kQwen2[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// BLOOM-style: words up to whitespace or sentence punctuation.
constexpr char kBloom[] = " ?[^(\\s|.,!?…。，、।۔،)]+";

// PCRE2 runs the Hugging Face patterns as written, so where llama.cpp rewrites a pattern for
// std::regex (Tekken, GPT-4o: upper/lower-case letter classes) the original is used here.
const std::vector<NamedConfig>& Configs() {
  static const std::vector<NamedConfig> configs = {
      {{"", "default"}, {{"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"},
       {{kLlama3}, /*ignore_merges=*/true, /*add_bos_by_default=*/true}},
      {{"dbrx", "smaug-bpe", "glm4", "chatglm-bpe"}, {{kLlama3}}},
      {{"deepseek-llm"},
       {{"[\\r\\n]",
         // Code points that Unicode normalization would fold (Greek oxia forms, the Ohm and Kelvin
         // signs) are written as escapes so the ranges stay exactly llama.cpp's.
         "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-"
         "ԯԱ-"
         "ՖႠ-"
         "ჅᎠ-"
         "Ᏽᏸ-"
         "ᏽᲐ-"
         "ᲺᲽ-"
         "Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-"
         "ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝ\\x{1F5F}-\\x{1F7D}ᾀ-ᾴᾶ-ᾼ\\x{1FBE}ῂ-ῄῆ-ῌ\\x{1FD0}-\\x{1FD3}"
         "\\x{1FD6}-\\x{1FDB}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\\x{2126}ℨ\\x{212A}-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳ"
         "Ꙁ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-"
         "𐓓𐓘-"
         "𐓻𐲀-"
         "𐲲𐳀-"
         "𐳲𑢠-"
         "𑣟𞤀-𞥃]+",
         "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "\\s+$", "[一-龥ࠀ-一가-퟿]+", "\\p{N}+"}}},
      {{"deepseek-coder"},
       {{"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"}}},
      {{"deepseek-v3", "hunyuan-dense"},
       {{"\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
         "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?"
         "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
      {{"falcon"}, {{"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"}}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
       {{"\\p{N}", kGpt2}}},
      {{"gpt-2", "phi-2", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4",
        "jina-es", "jina-de", "jina-v2-es", "jina-v2-de", "gigachat", "a.x-4.0", "mellum"},
       {{kGpt2}}},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "megrez", "stablelm2", "hunyuan", "grok-2"},
       {{kQwen2}}},
      {{"poro-chat", "bloom", "gpt3-finnish"}, {{kBloom}}},
      {{"viking"}, {{kBloom, "\\p{N}"}}},
      {{"tekken"},
       {{"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
         "|"
         "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
         "|"
         "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
        /*ignore_merges=*/true,
        /*add_bos_by_default=*/true}},
      {{"gpt-4o", "llama4", "minimax-m2"},
       {{"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
         "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
         "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
         "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
         "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
      {{"seed-coder"},
       {{"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
         "\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
      {{"bailingmoe", "bailingmoe2", "llada-moe"},
       {{"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
         " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}}},
      {{"chameleon"},
       {{"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
         "[\\p{P}!-/:-@\\[-`{-~]", kGpt2},
        /*ignore_merges=*/false,
        /*add_bos_by_default=*/true}},
  };
  return configs;
}

}  // namespace

std::optional<PreTokenizerConfig> FindPreTokenizerConfig(const std::string& pre) {
  for (const NamedConfig& named : Configs()) {
    for (const std::string& name : named.names) {
      if (name == pre) return named.config;
    }
  }
  return std::nullopt;
}

std::vector<std::string> KnownPreTokenizerNames() {
  std::vector<std::string> names;
  for (const NamedConfig& named : Configs()) {
    for (const std::string& name : named.names) {
      if (!name.empty()) names.push_back(name);
    }
  }
  return names;
}

}  // namespace vllm
