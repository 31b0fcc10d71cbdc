// Downloads from a fake hub (fake_hub.mjs under node, on 127.0.0.1): the revision API, resolve
// URLs redirected to a relative then an absolute URL, a connection dropped mid-file and resumed
// with a Range request, a gated repo (401), missing repos and revisions (404), and the cache left
// as huggingface_hub leaves it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/temp_test_dir.h"
#include "hub/hf_cache.h"
#include "hub/http_client.h"
#include "hub/hub_test_env.h"
#include "hub/resolve_model.h"

namespace vllm::hub {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// `node fake_hub.mjs ROOT --drop-once model.safetensors --corrupt m-BAD.gguf`, stopped by
// closing its stdin.
class FakeHub {
 public:
  explicit FakeHub(const std::string& root) {
    int to_child[2];
    int from_child[2];
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(to_child[0], STDIN_FILENO);
      ::dup2(from_child[1], STDOUT_FILENO);
      ::close(to_child[1]);
      ::close(from_child[0]);
      ::execl(VLLM_NODE, VLLM_NODE, VLLM_FAKE_HUB, root.c_str(), "--drop-once", "model.safetensors",
              "--corrupt", "m-BAD.gguf", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    stdin_ = to_child[1];
    std::string line;
    char c;
    while (::read(from_child[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(from_child[0]);
    port_ = line;
  }
  ~FakeHub() {
    if (stdin_ >= 0) ::close(stdin_);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }
  bool ok() const { return !port_.empty(); }
  std::string endpoint() const { return "http://127.0.0.1:" + port_; }
  // The requests the hub has seen.
  nlohmann::json Log() const {
    auto response = HttpClient({}).GetText(endpoint() + "/_log");
    return response ? nlohmann::json::parse(response->body) : nlohmann::json::array();
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::string port_;
};

class HubDownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path root = dir_.File("repos");
    WriteFile(root / "org/checkpoint/config.json", "{\"model_type\": \"llama\"}");
    WriteFile(root / "org/checkpoint/tokenizer.json", "{}");
    WriteFile(root / "org/checkpoint/README.md", "# card");
    WriteFile(root / "org/checkpoint/pytorch_model.bin", "pickle");
    weights_ = std::string(300000, 'w') + "end";
    WriteFile(root / "org/checkpoint/model.safetensors", weights_);
    WriteFile(root / "org/gguf/m-Q4_K_M.gguf", "q4 bytes");
    WriteFile(root / "org/gguf/m-Q8_0.gguf", "q8 bytes");
    WriteFile(root / "org/corrupt/m-BAD.gguf", "bytes the hub corrupts");
    WriteFile(root / "org/split/m-Q4_K_M-00001-of-00002.gguf", "first shard");
    WriteFile(root / "org/split/m-Q4_K_M-00002-of-00002.gguf", "second shard");
    WriteFile(root / "org/split/m-Q8_0.gguf", "q8 bytes");
    WriteFile(root / "org/tekken/tekken.json", "{}");
    WriteFile(root / "org/tekken/README.md", "# a Mistral tokenizer");
    WriteFile(root / "org/spm/tokenizer.model", "a SentencePiece model");
    WriteFile(root / "org/spm/README.md", "# a slow-only Llama tokenizer");
    WriteFile(root / "org/gated/config.json", "{}");
    WriteFile(root / "org/gated/model.safetensors", "secret");
    WriteFile(root / "org/gated/.token", "hf_secret");
    hub_ = std::make_unique<FakeHub>(root.string());
    ASSERT_TRUE(hub_->ok()) << "the fake hub did not start";
    env_.Set("HF_ENDPOINT", hub_->endpoint());
    env_.Set("HF_HUB_CACHE", dir_.File("cache"));
  }
  fs::path Repo(const std::string& repo) { return RepoCacheDir(dir_.File("cache"), repo); }

  TempTestDir dir_{"hub_download"};
  ScopedHubEnv env_;
  std::unique_ptr<FakeHub> hub_;
  std::string weights_;
};

TEST_F(HubDownloadTest, CheckpointDownloadsResumesAndLaysOutTheCache) {
  auto path = ResolveModel("org/checkpoint", {});
  ASSERT_TRUE(path) << path.error();
  const fs::path snapshot(*path);
  const std::string commit = snapshot.filename().string();
  EXPECT_EQ(snapshot, Repo("org/checkpoint") / "snapshots" / commit);
  EXPECT_EQ(ReadFile(Repo("org/checkpoint") / "refs" / "main"), commit);
  // Weights, config and tokenizer; not the .bin nor the card.
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(snapshot)) {
    files.push_back(entry.path().filename().string());
    EXPECT_TRUE(entry.is_symlink());
    EXPECT_EQ(fs::read_symlink(entry.path()).parent_path(), fs::path("../../blobs"));
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files,
            (std::vector<std::string>{"config.json", "model.safetensors", "tokenizer.json"}));
  EXPECT_EQ(ReadFile(snapshot / "model.safetensors"), weights_);
  EXPECT_EQ(ReadFile(snapshot / "config.json"), "{\"model_type\": \"llama\"}");
  for (const auto& entry : fs::directory_iterator(Repo("org/checkpoint") / "blobs")) {
    EXPECT_NE(entry.path().extension(), ".incomplete");
  }
  // The weights' first GET was cut halfway; the next asked for the rest.
  int weight_gets = 0;
  bool resumed = false;
  for (const auto& request : hub_->Log()) {
    if (request["url"] == "/blob/org/checkpoint/model.safetensors") {
      ++weight_gets;
      resumed =
          resumed || (request["range"].is_string() &&
                      request["range"] == "bytes=" + std::to_string(weights_.size() / 2) + "-");
    }
  }
  EXPECT_EQ(weight_gets, 2);
  EXPECT_TRUE(resumed);
  // Offline, the same id resolves from the cache.
  env_.Set("HF_HUB_OFFLINE", "1");
  EXPECT_EQ(*ResolveModel("org/checkpoint", {}), *path);
}

TEST_F(HubDownloadTest, TekkenOnlyRepoIsATokenizer) {
  auto path = ResolveModel("org/tekken", {.part = RepoPart::kTokenizer});
  ASSERT_TRUE(path) << path.error();
  EXPECT_TRUE(fs::exists(fs::path(*path) / "tekken.json"));
  EXPECT_FALSE(fs::exists(fs::path(*path) / "README.md"));
}

TEST_F(HubDownloadTest, TokenizerModelOnlyRepoIsATokenizer) {
  auto path = ResolveModel("org/spm", {.part = RepoPart::kTokenizer});
  ASSERT_TRUE(path) << path.error();
  EXPECT_TRUE(fs::exists(fs::path(*path) / "tokenizer.model"));
  EXPECT_FALSE(fs::exists(fs::path(*path) / "README.md"));
}

TEST_F(HubDownloadTest, GgufTagFetchesOnlyThatFile) {
  auto path = ResolveModel("org/gguf:Q8_0", {.download_dir = dir_.File("elsewhere")});
  ASSERT_TRUE(path) << path.error();
  EXPECT_EQ(fs::path(*path).filename(), "m-Q8_0.gguf");
  EXPECT_EQ(ReadFile(*path), "q8 bytes");
  const fs::path repo = RepoCacheDir(dir_.File("elsewhere"), "org/gguf");
  EXPECT_EQ(std::distance(fs::directory_iterator(repo / "blobs"), fs::directory_iterator()), 1);
  EXPECT_FALSE(fs::exists(Repo("org/gguf")));  // nothing in the environment's cache
}

TEST_F(HubDownloadTest, SplitGgufTagFetchesEveryShard) {
  auto path = ResolveModel("org/split:Q4_K_M", {});
  ASSERT_TRUE(path) << path.error();
  EXPECT_EQ(fs::path(*path).filename(), "m-Q4_K_M-00001-of-00002.gguf");
  EXPECT_EQ(ReadFile(*path), "first shard");
  EXPECT_EQ(ReadFile(fs::path(*path).parent_path() / "m-Q4_K_M-00002-of-00002.gguf"),
            "second shard");
  EXPECT_FALSE(fs::exists(fs::path(*path).parent_path() / "m-Q8_0.gguf"));
  // Offline, the set resolves from the cache; with a shard gone, it is not whole there.
  env_.Set("HF_HUB_OFFLINE", "1");
  EXPECT_EQ(*ResolveModel("org/split:Q4_K_M", {}), *path);
  fs::remove(fs::path(*path).parent_path() / "m-Q4_K_M-00002-of-00002.gguf");
  auto partial = ResolveModel("org/split:Q4_K_M", {});
  ASSERT_FALSE(partial);
  EXPECT_NE(partial.error().find("shard m-Q4_K_M-00002-of-00002.gguf of the split GGUF"),
            std::string::npos)
      << partial.error();
}

TEST_F(HubDownloadTest, FileNotMatchingItsSha256IsRefusedAndNotKept) {
  auto path = ResolveModel("org/corrupt:BAD", {});
  ASSERT_FALSE(path);
  EXPECT_NE(path.error().find("m-BAD.gguf of org/corrupt: the file's sha256 is "),
            std::string::npos)
      << path.error();
  EXPECT_NE(path.error().find("corrupted in transfer"), std::string::npos);
  // Neither the blob, nor a partial file, nor a snapshot link is left.
  EXPECT_TRUE(fs::is_empty(Repo("org/corrupt") / "blobs"));
  EXPECT_FALSE(fs::exists(Repo("org/corrupt") / "snapshots"));
}

TEST_F(HubDownloadTest, GatedMissingAndRevisionErrorsAreClear) {
  auto gated = ResolveModel("org/gated", {});
  ASSERT_FALSE(gated);
  EXPECT_NE(gated.error().find("org/gated is gated or private"), std::string::npos)
      << gated.error();
  EXPECT_NE(gated.error().find("set HF_TOKEN"), std::string::npos);
  auto with_token = ResolveModel("org/gated", {.token = "hf_secret"});
  ASSERT_TRUE(with_token) << with_token.error();
  EXPECT_EQ(ReadFile(fs::path(*with_token) / "model.safetensors"), "secret");

  auto missing = ResolveModel("org/absent", {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("org/absent not found on " + hub_->endpoint().substr(0, 17)),
            std::string::npos)
      << missing.error();
  auto revision = ResolveModel("org/checkpoint", {.revision = "v9"});
  ASSERT_FALSE(revision);
  EXPECT_NE(revision.error().find("revision 'v9' of org/checkpoint not found"), std::string::npos)
      << revision.error();
  auto tag = ResolveModel("org/gguf:Q2_K", {});
  ASSERT_FALSE(tag);
  EXPECT_NE(tag.error().find("no GGUF file of org/gguf matches the tag 'Q2_K'"), std::string::npos);
  auto file = ResolveModel("org/gguf/absent.gguf", {});
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().find("absent.gguf is not a file of org/gguf"), std::string::npos);
}

TEST_F(HubDownloadTest, OfflineNeverTouchesTheNetwork) {
  env_.Set("HF_HUB_OFFLINE", "1");
  auto offline = ResolveModel("org/checkpoint", {});
  ASSERT_FALSE(offline);
  EXPECT_NE(offline.error().find("HF_HUB_OFFLINE is set"), std::string::npos);
  EXPECT_TRUE(hub_->Log().empty());
}

}  // namespace
}  // namespace vllm::hub
