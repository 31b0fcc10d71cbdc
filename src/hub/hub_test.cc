// Model ids, the cache layout, GGUF tag matching, file selection and URLs; ids resolved from a
// cache built by the test, offline.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/temp_test_dir.h"
#include "hub/hf_cache.h"
#include "hub/http_client.h"
#include "hub/hub_environment.h"
#include "hub/hub_test_env.h"
#include "hub/model_id.h"
#include "hub/repo_files.h"
#include "hub/resolve_model.h"

namespace vllm::hub {
namespace {

namespace fs = std::filesystem;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kOtherCommit = "fedcba9876543210fedcba9876543210fedcba98";

// The path `model` resolves to, or its error (so a failure shows the message).
std::string Resolved(const std::string& model, const HubOptions& options) {
  auto path = ResolveModel(model, options);
  return path ? *path : "error: " + path.error();
}

TEST(ModelIdTest, ParsesIdsTagsAndFiles) {
  auto id = ParseModelId("Qwen/Qwen2.5-1.5B-Instruct");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->repo, "Qwen/Qwen2.5-1.5B-Instruct");
  EXPECT_EQ(id->gguf_tag, "");
  EXPECT_EQ(id->gguf_file, "");
  id = ParseModelId("bartowski/Llama-3.2-1B-Instruct-GGUF:q4_k_m");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->repo, "bartowski/Llama-3.2-1B-Instruct-GGUF");
  EXPECT_EQ(id->gguf_tag, "q4_k_m");
  id = ParseModelId("org/repo/sub/model-Q8_0.gguf");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->repo, "org/repo");
  EXPECT_EQ(id->gguf_file, "sub/model-Q8_0.gguf");
}

TEST(ModelIdTest, RefusesWhatIsNoId) {
  for (const char* text : {"model.gguf", "models/model.gguf", "/abs/org/name", "./org/name",
                           "org/name:", "org--x/name", "org/na..me", "org/name/weights.bin",
                           "org/name/../x.gguf", "org/", "-org/name", "org/name:Q4 K"}) {
    EXPECT_FALSE(ParseModelId(text)) << text;
  }
}

TEST(HfCacheTest, CacheDirFollowsHuggingFaceHubsOrder) {
  ScopedHubEnv env;
  env.Set("HOME", "/home/u");
  EXPECT_EQ(*HubCacheDir(""), fs::path("/home/u/.cache/huggingface/hub"));
  env.Set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(*HubCacheDir(""), fs::path("/xdg/huggingface/hub"));
  env.Set("HF_HOME", "/hf");
  EXPECT_EQ(*HubCacheDir(""), fs::path("/hf/hub"));
  env.Set("HUGGINGFACE_HUB_CACHE", "/legacy");
  EXPECT_EQ(*HubCacheDir(""), fs::path("/legacy"));
  env.Set("HF_HUB_CACHE", "/cache");
  EXPECT_EQ(*HubCacheDir(""), fs::path("/cache"));
  EXPECT_EQ(*HubCacheDir("/downloads"), fs::path("/downloads"));
  EXPECT_EQ(RepoCacheDir("/cache", "Qwen/Qwen2.5-0.5B"),
            fs::path("/cache/models--Qwen--Qwen2.5-0.5B"));
}

TEST(HfCacheTest, EnvironmentNamesEndpointOfflineAndToken) {
  ScopedHubEnv env;
  EXPECT_EQ(HubEndpoint(), "https://huggingface.co");
  env.Set("HF_ENDPOINT", "http://127.0.0.1:8/");
  EXPECT_EQ(HubEndpoint(), "http://127.0.0.1:8");
  EXPECT_FALSE(HubOffline());
  env.Set("HF_HUB_OFFLINE", "0");
  EXPECT_FALSE(HubOffline());
  env.Set("TRANSFORMERS_OFFLINE", "yes");
  EXPECT_TRUE(HubOffline());
  TempTestDir dir("hub_token");
  env.Set("HF_HOME", dir.File(""));
  EXPECT_EQ(HubToken(""), "");
  std::ofstream(dir.File("token")) << "hf_file\n";
  EXPECT_EQ(HubToken(""), "hf_file");
  env.Set("HF_TOKEN", "hf_env");
  EXPECT_EQ(HubToken(""), "hf_env");
  EXPECT_EQ(HubToken("hf_flag"), "hf_flag");
}

TEST(HfCacheTest, RevisionsRefsAndSnapshotLinks) {
  EXPECT_TRUE(IsCommitHash(kCommit));
  EXPECT_FALSE(IsCommitHash("main"));
  EXPECT_FALSE(IsCommitHash("0123456789ABCDEF0123456789abcdef01234567"));
  EXPECT_TRUE(IsSafeRevisionName("refs/pr/1"));
  for (const char* bad : {"", "/etc", "../x", "a/../b", "a/"})
    EXPECT_FALSE(IsSafeRevisionName(bad));

  TempTestDir dir("hub_refs");
  const fs::path repo = dir.File("models--org--name");
  EXPECT_EQ(*CachedCommit(repo, "main"), "");
  EXPECT_EQ(*CachedCommit(repo, kCommit), kCommit);  // a hash is its own commit
  ASSERT_TRUE(WriteRef(repo, "main", kCommit).ok());
  ASSERT_TRUE(WriteRef(repo, "refs/pr/1", kOtherCommit).ok());
  EXPECT_EQ(*CachedCommit(repo, "main"), kCommit);
  EXPECT_EQ(*CachedCommit(repo, "refs/pr/1"), kOtherCommit);
  std::ofstream(repo / "refs" / "broken") << "not a hash";
  EXPECT_FALSE(CachedCommit(repo, "broken"));

  ASSERT_TRUE(LinkSnapshotFile(repo, kCommit, "config.json", "abc").ok());
  ASSERT_TRUE(LinkSnapshotFile(repo, kCommit, "sub/dir/x.gguf", "def").ok());
  EXPECT_EQ(fs::read_symlink(repo / "snapshots" / kCommit / "config.json"),
            fs::path("../../blobs/abc"));
  EXPECT_EQ(fs::read_symlink(repo / "snapshots" / kCommit / "sub/dir/x.gguf"),
            fs::path("../../../../blobs/def"));
}

TEST(RepoFilesTest, GgufTagsMatchAsLlamaCppHf) {
  const std::vector<std::string> files = {"README.md",
                                          "model-IQ4_XS.gguf",
                                          "model-Q4_K.gguf",
                                          "model-Q4_K_M.gguf",
                                          "model-q8_0.gguf",
                                          "mmproj-model-Q8_0.gguf",
                                          "big-Q6_K-00001-of-00002.gguf",
                                          "big-Q6_K-00002-of-00002.gguf"};
  EXPECT_EQ(*ChooseGgufFile(files, "Q4_K_M", "o/r"), "model-Q4_K_M.gguf");
  EXPECT_EQ(*ChooseGgufFile(files, "q4_k", "o/r"), "model-Q4_K.gguf");  // not Q4_K_M
  EXPECT_EQ(*ChooseGgufFile(files, "Q8_0", "o/r"), "model-q8_0.gguf");  // not the mmproj
  EXPECT_EQ(*ChooseGgufFile(files, "iq4_xs", "o/r"), "model-IQ4_XS.gguf");
  EXPECT_EQ(*ChooseGgufFile(files, "", "o/r"), "model-Q4_K_M.gguf");  // the hub's default
  auto missing = ChooseGgufFile(files, "Q5_K_S", "o/r");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("no GGUF file of o/r matches the tag 'Q5_K_S'"),
            std::string::npos);
  // A split set is one candidate: its first shard, which needs every shard.
  EXPECT_EQ(*ChooseGgufFile(files, "Q6_K", "o/r"), "big-Q6_K-00001-of-00002.gguf");
  EXPECT_EQ(
      *GgufSetFiles(files, "big-Q6_K-00001-of-00002.gguf", "o/r"),
      (std::vector<std::string>{"big-Q6_K-00001-of-00002.gguf", "big-Q6_K-00002-of-00002.gguf"}));
  EXPECT_EQ(*GgufSetFiles(files, "model-Q4_K.gguf", "o/r"),
            std::vector<std::string>{"model-Q4_K.gguf"});
  auto second = GgufSetFiles(files, "big-Q6_K-00002-of-00002.gguf", "o/r");
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(),
            "big-Q6_K-00002-of-00002.gguf of o/r is one shard of a split GGUF: name its first, "
            "big-Q6_K-00001-of-00002.gguf");
  auto lacking =
      GgufSetFiles({"big-Q6_K-00001-of-00002.gguf"}, "big-Q6_K-00001-of-00002.gguf", "o/r");
  ASSERT_FALSE(lacking);
  EXPECT_EQ(lacking.error(),
            "shard big-Q6_K-00002-of-00002.gguf of the split GGUF big-Q6_K-00001-of-00002.gguf "
            "is not in o/r");
  auto ambiguous = ChooseGgufFile({"a-Q4_0.gguf", "b-Q4_0.gguf"}, "Q4_0", "o/r");
  ASSERT_FALSE(ambiguous);
  EXPECT_NE(ambiguous.error().find("matches several GGUF files"), std::string::npos);
  EXPECT_EQ(*ChooseGgufFile({"only.gguf"}, "", "o/r"), "only.gguf");
  auto several = ChooseGgufFile({"a-Q4_0.gguf", "a-Q8_0.gguf"}, "", "o/r");
  ASSERT_FALSE(several);
  EXPECT_NE(several.error().find("pick one with o/r:TAG"), std::string::npos);
  EXPECT_FALSE(ChooseGgufFile({"config.json"}, "", "o/r"));
}

TEST(RepoFilesTest, CheckpointsFetchSafetensorsConfigAndTokenizerOnly) {
  const std::vector<std::string> files = {"config.json",
                                          "generation_config.json",
                                          "tokenizer.json",
                                          "tokenizer_config.json",
                                          "tokenizer.model",
                                          "special_tokens_map.json",
                                          "chat_template.jinja",
                                          "README.md",
                                          "model-00001-of-00002.safetensors",
                                          "model-00002-of-00002.safetensors",
                                          "model.safetensors.index.json",
                                          "consolidated.safetensors",
                                          "pytorch_model.bin",
                                          "tf_model.h5",
                                          "flax_model.msgpack",
                                          "onnx/model.onnx",
                                          "original/params.json"};
  EXPECT_TRUE(IsSafetensorsRepo(files));
  auto model = SelectCheckpointFiles(files, RepoPart::kModel, "o/r");
  ASSERT_TRUE(model) << model.error();
  EXPECT_EQ(*model, (std::vector<std::string>{
                        "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                        "tokenizer.model", "special_tokens_map.json", "chat_template.jinja",
                        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                        "model.safetensors.index.json", "config.json"}));
  auto tokenizer = SelectCheckpointFiles(files, RepoPart::kTokenizer, "o/r");
  EXPECT_EQ(*tokenizer, (std::vector<std::string>{"generation_config.json", "tokenizer.json",
                                                  "tokenizer_config.json", "tokenizer.model",
                                                  "special_tokens_map.json", "chat_template.jinja",
                                                  "config.json"}));
  auto bin_only =
      SelectCheckpointFiles({"config.json", "pytorch_model.bin"}, RepoPart::kModel, "o/r");
  ASSERT_FALSE(bin_only);
  EXPECT_NE(bin_only.error().find("does not load .bin"), std::string::npos);
}

TEST(HttpClientTest, UrlsAndRedirectLocations) {
  auto url = ParseUrl("https://huggingface.co/api/models/o/r?x=1#frag");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "huggingface.co");
  EXPECT_EQ(url->port, "443");
  EXPECT_EQ(url->target, "/api/models/o/r?x=1");
  url = ParseUrl("http://127.0.0.1:8080");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->port, "8080");
  EXPECT_EQ(url->target, "/");
  for (const char* bad :
       {"ftp://x/", "huggingface.co", "http://:80/", "http://h:x/", "http://u:p@h/"}) {
    EXPECT_FALSE(ParseUrl(bad)) << bad;
  }
  const Url base = *ParseUrl("http://hub:1/o/r/resolve/main/a/b.gguf");
  EXPECT_EQ(ResolveLocation(base, "/cdn/x")->target, "/cdn/x");
  EXPECT_EQ(ResolveLocation(base, "c.gguf")->target, "/o/r/resolve/main/a/c.gguf");
  EXPECT_EQ(ResolveLocation(base, "https://cdn.example/x")->Origin(), "https://cdn.example:443");
  EXPECT_EQ(ResolveLocation(base, "//cdn:2/y")->Origin(), "http://cdn:2");
  EXPECT_EQ(PercentEncode("refs/pr/1", false), "refs%2Fpr%2F1");
  EXPECT_EQ(PercentEncode("a b/c.gguf", true), "a%20b/c.gguf");
}

// A cache as huggingface_hub leaves it: blobs, snapshot links and refs.
class ResolveFromCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Set("HF_HUB_CACHE", cache_.File("hub"));
    env_.Set("HF_HUB_OFFLINE", "1");
    AddFile("org/checkpoint", kCommit, "config.json", "{}");
    AddFile("org/checkpoint", kCommit, "model.safetensors", "weights");
    ASSERT_TRUE(WriteRef(Repo("org/checkpoint"), "main", kCommit).ok());
    AddFile("org/checkpoint", kOtherCommit, "config.json", "{\"v\": 1}");
    AddFile("org/checkpoint", kOtherCommit, "model.safetensors", "weights 1");
    ASSERT_TRUE(WriteRef(Repo("org/checkpoint"), "v1", kOtherCommit).ok());
    AddFile("org/gguf", kCommit, "m-Q4_K_M.gguf", "q4");
    AddFile("org/gguf", kCommit, "m-Q8_0.gguf", "q8");
    ASSERT_TRUE(WriteRef(Repo("org/gguf"), "main", kCommit).ok());
  }
  fs::path Repo(const std::string& repo) { return RepoCacheDir(cache_.File("hub"), repo); }
  void AddFile(const std::string& repo, const std::string& commit, const std::string& file,
               const std::string& bytes) {
    const std::string etag = commit.substr(0, 8) + "-" + file;
    fs::create_directories(Repo(repo) / "blobs");
    std::ofstream(Repo(repo) / "blobs" / etag) << bytes;
    ASSERT_TRUE(LinkSnapshotFile(Repo(repo), commit, file, etag).ok());
  }
  std::string Snapshot(const std::string& repo, const std::string& commit) {
    return (Repo(repo) / "snapshots" / commit).string();
  }
  ScopedHubEnv env_;
  TempTestDir cache_{"hub_cache"};
};

TEST_F(ResolveFromCacheTest, IdsResolveToSnapshotsAtTheirRevision) {
  EXPECT_EQ(Resolved("org/checkpoint", {}), Snapshot("org/checkpoint", kCommit));
  EXPECT_EQ(Resolved("org/checkpoint", {.revision = "v1"}),
            Snapshot("org/checkpoint", kOtherCommit));
  EXPECT_EQ(Resolved("org/checkpoint", {.revision = kOtherCommit}),
            Snapshot("org/checkpoint", kOtherCommit));
  EXPECT_EQ(Resolved("org/gguf:q8_0", {}), Snapshot("org/gguf", kCommit) + "/m-Q8_0.gguf");
  EXPECT_EQ(Resolved("org/gguf", {}), Snapshot("org/gguf", kCommit) + "/m-Q4_K_M.gguf");
  EXPECT_EQ(Resolved("org/gguf/m-Q8_0.gguf", {}), Snapshot("org/gguf", kCommit) + "/m-Q8_0.gguf");
  // --download-dir replaces the environment's cache.
  env_.Set("HF_HUB_CACHE", "/nonexistent");
  EXPECT_EQ(Resolved("org/gguf", {.download_dir = cache_.File("hub")}),
            Snapshot("org/gguf", kCommit) + "/m-Q4_K_M.gguf");
}

TEST_F(ResolveFromCacheTest, PathsStayPathsAndMissesAreClearOffline) {
  EXPECT_EQ(Resolved(cache_.File("hub"), {}), cache_.File("hub"));  // an existing path
  auto missing_path = ResolveModel(cache_.File("missing.gguf"), {});
  ASSERT_FALSE(missing_path);
  EXPECT_NE(missing_path.error().find("is neither a local file or directory nor a Hugging Face "
                                      "model id"),
            std::string::npos);
  auto absent = ResolveModel("org/absent", {});
  ASSERT_FALSE(absent);
  EXPECT_NE(absent.error().find("org/absent is not in the Hugging Face cache"), std::string::npos);
  EXPECT_NE(absent.error().find("HF_HUB_OFFLINE is set"), std::string::npos);
  auto revision = ResolveModel("org/checkpoint", {.revision = "v2"});
  ASSERT_FALSE(revision);
  EXPECT_NE(revision.error().find("refs/v2 is absent"), std::string::npos);
  auto tag = ResolveModel("org/gguf:Q2_K", {});
  ASSERT_FALSE(tag);
  EXPECT_NE(tag.error().find("no GGUF file of org/gguf matches the tag 'Q2_K'"), std::string::npos);
  EXPECT_FALSE(ResolveModel("org/checkpoint", {.revision = "../x"}));
}

}  // namespace
}  // namespace vllm::hub
