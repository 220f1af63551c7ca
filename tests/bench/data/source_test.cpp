// The run's token streams: shards by glob, the validation stream (a file, nanoGPT's val.bin, or a held-out tail the
// training stream never reaches), the vocabulary the data declares, corpora from the cache, and the provenance record.
#include "bench/data/source.h"
#include "bench/data/corpus.h"
#include "bench/data/external.h"
#include "bench/data/shards.h"
#include "bench/data/vocabulary.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>

namespace stepwise::bench {
namespace {

constexpr int64_t kVocab = 50257;
// The sha256 of "abc" (FIPS 180-2, appendix B.1).
constexpr const char* kAbcSha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
// pickle.dumps({'vocab_size': 65, 'itos': {0: 'a'}}, protocol=2): nanoGPT's character-level meta.pkl, in small.
// (Literals split where a hex escape would swallow the next letter: "\x00" "a" is two bytes, "\x00a" one.)
constexpr char kMetaPkl[] =
    "\x80\x02}q\x00(X\n\x00\x00\x00vocab_sizeq\x01KAX\x04\x00\x00\x00itosq\x02}q\x03K\x00X\x01\x00\x00\x00"
    "aq\x04su.";
// pickle.dumps of an object whose __reduce__ is (os.system, ('true',)): a pickle that would run code.
constexpr char kHostilePkl[] =
    "\x80\x02"
    "cposix\nsystem\nq\x00X\x04\x00\x00\x00"
    "trueq\x01\x85q\x02Rq\x03.";

class Data : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("stepwise-source-" + std::to_string(getpid()));
  void SetUp() override {
    std::filesystem::create_directories(dir);
    setenv("STEPWISE_CORPUS_DIR", (dir / "corpora").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("STEPWISE_CORPUS_DIR");
    std::filesystem::remove_all(dir);
  }

  std::filesystem::path raw(const std::string& name, const Tokens& tokens) {
    const auto path = dir / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size() * 2));
    return path;
  }
  std::filesystem::path llmc(const std::string& name, const Tokens& tokens, int32_t magic = kLlmcMagic) {
    const auto path = dir / name;
    std::vector<int32_t> header(kLlmcHeaderInts, 0);
    header[0] = magic;
    header[1] = kLlmcVersion;
    header[2] = static_cast<int32_t>(tokens.size());
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size() * 4));
    out.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size() * 2));
    return path;
  }
  std::filesystem::path text(const std::string& name, const std::string& content) {
    const auto path = dir / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  static Tokens counting(size_t n, uint16_t modulo = 1000) {
    Tokens t(n);
    for (size_t i = 0; i < n; ++i) t[i] = static_cast<uint16_t>(i % modulo);
    return t;
  }
  static DataOptions options(const std::string& path) {
    DataOptions d;
    d.path = path;
    return d;
  }
  // A corpus as scripts/corpus.py leaves it: train.bin, val.bin and meta.json with their counts and sha256.
  void build_corpus(const std::string& name, const Tokens& train, const Tokens& val, int64_t vocab) {
    const auto train_path = raw("corpora/" + name + "/train.bin", train);
    const auto val_path = raw("corpora/" + name + "/val.bin", val);
    const nlohmann::json meta{
        {"name", name},
        {"vocab_size", vocab},
        {"tokenizer", "bytes"},
        {"source", {{"packages", {{"fortunes", "1:1.99.1-7.3"}}}}},
        {"ranks", nullptr},
        {"train", {{"file", "train.bin"}, {"tokens", train.size()}, {"sha256", file_sha256(train_path)}}},
        {"val", {{"file", "val.bin"}, {"tokens", val.size()}, {"sha256", file_sha256(val_path)}}}};
    text("corpora/" + name + "/meta.json", meta.dump());
  }
  static void expect_error(const std::function<void()>& f, const std::string& fragment) {
    try {
      f();
      FAIL() << "expected an error containing '" << fragment << "'";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
};

TEST_F(Data, Sha256IsCoreutilsDigestOfTheFile) { EXPECT_EQ(file_sha256(text("abc.txt", "abc")), kAbcSha256); }

TEST_F(Data, AGlobReadsItsShardsSortedByNameAsOneStream) {
  llmc("fineweb_train_000002.bin", {4, 5});
  llmc("fineweb_train_000001.bin", {1, 2, 3});
  llmc("fineweb_val_000000.bin", {9});
  const auto paths = expand_token_paths((dir / "fineweb_train_*.bin").string());
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0].filename(), "fineweb_train_000001.bin");
  const auto stream = read_token_files(paths, TokenFileFormat::Auto, kVocab);
  EXPECT_EQ(stream.tokens, (Tokens{1, 2, 3, 4, 5}));
  EXPECT_EQ(stream.format, TokenFileFormat::LlmC);
  ASSERT_EQ(stream.files.size(), 2u);
  EXPECT_EQ(stream.files[0]["tokens"], 3);
  EXPECT_EQ(stream.files[1]["bytes"], 1024 + 4);
  EXPECT_EQ(stream.files[1]["sha256"], file_sha256(paths[1]));
}

TEST_F(Data, AGlobThatMatchesNothingNamesThePattern) {
  expect_error([&] { expand_token_paths((dir / "nothing_*.bin").string()); }, "no token file matches");
}

TEST_F(Data, APlainPathIsOneFileEvenWhenMissing) {
  EXPECT_EQ(expand_token_paths("/no/such/train.bin").size(), 1u);
  expect_error([] { load_tokens(options("/no/such/train.bin"), kVocab, 8, 1, 0); }, "does not exist");
}

TEST_F(Data, AShardWithAWrongMagicIsNamedAmongItsSiblings) {
  llmc("s_000001.bin", {1, 2, 3});
  const auto bad = llmc("s_000002.bin", {1, 2, 3}, 12345);
  auto d = options((dir / "s_*.bin").string());
  d.format = TokenFileFormat::LlmC;  // auto would read a header without the magic as raw tokens
  expect_error([&] { load_tokens(d, kVocab, 1, 1, 0); }, "token file " + bad.string() + ": wrong magic 12345");
}

TEST_F(Data, ShardsOfOneStreamShareAFormat) {
  llmc("m_000001.bin", {1, 2, 3});
  raw("m_000002.bin", {1, 2, 3});
  expect_error([&] { load_tokens(options((dir / "m_*.bin").string()), kVocab, 1, 1, 0); }, "share a format");
}

TEST_F(Data, AShortFileIsAClearError) {
  text("short.bin", std::string(3, '\0'));
  expect_error([&] { load_tokens(options((dir / "short.bin").string()), kVocab, 1, 1, 0); }, "truncated");
}

TEST_F(Data, WithoutValidationTheWholeStreamIsTrainedOn) {
  raw("train.bin", counting(1000));
  raw("val.bin", counting(100));
  const auto s = load_tokens(options((dir / "train.bin").string()), kVocab, 8, 1, 0);
  EXPECT_EQ(s.tokens->size(), 1000u);
  EXPECT_FALSE(s.val_tokens);
  EXPECT_EQ(s.provenance["val"], "none");
  EXPECT_EQ(s.provenance["kind"], "file");
  EXPECT_EQ(s.provenance["vocab_source"], "model");
  EXPECT_EQ(s.provenance["vocab_size"], kVocab);
  EXPECT_FALSE(s.vocab_size);
}

TEST_F(Data, NanoGptValBinBesideTrainBinIsTheValidationStream) {
  raw("train.bin", counting(1000));
  raw("val.bin", counting(100));
  const auto s = load_tokens(options((dir / "train.bin").string()), kVocab, 8, 1, 0, true);
  EXPECT_EQ(s.tokens->size(), 1000u);
  ASSERT_TRUE(s.val_tokens);
  EXPECT_EQ(s.val_tokens->size(), 100u);
  EXPECT_EQ(s.provenance["val"], "file");
  EXPECT_EQ(s.provenance["val_files"][0]["path"], (dir / "val.bin").string());
}

TEST_F(Data, TheHeldOutTailIsNeverInTheTrainingStream) {
  const auto all = counting(1000, 60000);
  raw("tokens.bin", all);
  auto d = options((dir / "tokens.bin").string());
  d.val_fraction = 0.2;
  const auto s = load_tokens(d, kVocab, 8, 1, 0, true);
  ASSERT_TRUE(s.val_tokens);
  EXPECT_EQ(s.tokens->size(), 800u);
  EXPECT_EQ(s.val_tokens->size(), 200u);
  EXPECT_EQ(*s.tokens, Tokens(all.begin(), all.begin() + 800));
  EXPECT_EQ(*s.val_tokens, Tokens(all.begin() + 800, all.end()));
  EXPECT_EQ(s.provenance["val"], "split");
  EXPECT_EQ(s.provenance["val_fraction"], 0.2);
  EXPECT_EQ(s.provenance["train_tokens"], 800);
  EXPECT_EQ(s.provenance["val_tokens"], 200);
  EXPECT_EQ(s.provenance["files"][0]["tokens"], 1000) << "a file's record is the whole file";
}

TEST_F(Data, AGivenValidationGlobWinsOverTheSplit) {
  raw("tokens.bin", counting(1000));
  llmc("v_1.bin", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  auto d = options((dir / "tokens.bin").string());
  d.val_path = (dir / "v_*.bin").string();
  const auto s = load_tokens(d, kVocab, 8, 1, 0, true);
  EXPECT_EQ(s.tokens->size(), 1000u);
  EXPECT_EQ(s.val_tokens->size(), 10u);
  EXPECT_EQ(s.provenance["val"], "file");
}

TEST_F(Data, AValidationStreamShorterThanOneSequenceIsAClearError) {
  raw("train.bin", counting(1000));
  raw("val.bin", counting(5));
  expect_error([&] { load_tokens(options((dir / "train.bin").string()), kVocab, 8, 1, 0, true); },
               "fewer than one sequence of 9");
}

TEST_F(Data, SyntheticDataHoldsOutItsTailWhenAskedForValidation) {
  DataOptions d;
  const auto plain = load_tokens(d, kVocab, 64, 4, 7);
  EXPECT_FALSE(plain.val_tokens);
  EXPECT_EQ(plain.provenance["kind"], "synthetic");
  const auto with_val = load_tokens(d, kVocab, 64, 4, 7, true);
  ASSERT_TRUE(with_val.val_tokens);
  const double total = static_cast<double>(with_val.tokens->size() + with_val.val_tokens->size());
  EXPECT_NEAR(static_cast<double>(with_val.val_tokens->size()) / total, 0.1, 1e-3);
  EXPECT_GE(with_val.tokens->size(), plain.tokens->size()) << "training keeps what it had without validation";
  EXPECT_EQ(with_val.provenance["val"], "split");
}

TEST_F(Data, AFractionOutsideZeroToOneIsRefused) {
  DataOptions d;
  d.val_fraction = 1.0;
  expect_error([&] { load_tokens(d, kVocab, 8, 1, 0, true); }, "must be in (0, 1), got 1");
}

TEST_F(Data, MetaJsonDeclaresTheVocabularyAndBoundsTheIds) {
  raw("char/train.bin", {1, 2, 64});
  text("char/meta.json", R"({"vocab_size": 65, "tokenizer": "characters"})");
  // The model's 10 would refuse id 64; the data's own 65 bounds it, and the model is then sized from it.
  const auto s = load_tokens(options((dir / "char/train.bin").string()), 10, 1, 1, 0);
  EXPECT_EQ(s.vocab_size, 65);
  EXPECT_EQ(s.provenance["vocab_source"], "meta.json");
  EXPECT_EQ(s.provenance["tokenizer"], "characters");
  raw("char/train.bin", {1, 2, 65});
  expect_error([&] { load_tokens(options((dir / "char/train.bin").string()), kVocab, 1, 1, 0); },
               "token 65 at position 2 is outside the vocabulary (65)");
}

TEST_F(Data, AMetaJsonWithABadVocabularyIsAClearError) {
  raw("bad/train.bin", {1, 2});
  text("bad/meta.json", R"({"vocab_size": "many"})");
  expect_error([&] { load_tokens(options((dir / "bad/train.bin").string()), kVocab, 1, 1, 0); },
               "vocab_size must be a positive integer");
  text("bad/meta.json", "{not json");
  expect_error([&] { load_tokens(options((dir / "bad/train.bin").string()), kVocab, 1, 1, 0); }, "not valid JSON");
}

TEST_F(Data, NanoGptMetaPklIsReadByPython) {
  raw("shakespeare_char/train.bin", {0, 1, 64});
  text("shakespeare_char/meta.pkl", std::string(kMetaPkl, sizeof(kMetaPkl) - 1));
  const auto s = load_tokens(options((dir / "shakespeare_char/train.bin").string()), kVocab, 1, 1, 0);
  EXPECT_EQ(s.vocab_size, 65);
  EXPECT_EQ(s.provenance["vocab_source"], "meta.pkl");
}

TEST_F(Data, AMetaPklThatWouldRunCodeIsRefused) {
  const auto pkl = text("hostile/meta.pkl", std::string(kHostilePkl, sizeof(kHostilePkl) - 1));
  expect_error([&] { pickle_vocab_size(pkl); }, "refusing to load posix.system");
}

TEST_F(Data, AMissingCorpusNamesTheCommandThatBuildsIt) {
  expect_error([] { load_tokens(options("corpus:fortunes"), kVocab, 8, 1, 0); }, "scripts/setup.sh --corpus fortunes");
  expect_error([] { find_corpus("../etc"); }, "is not valid");
  EXPECT_EQ(corpus_root(), dir / "corpora");
}

TEST_F(Data, ACorpusIsItsTrainBinWithItsValBinForValidation) {
  build_corpus("tiny", counting(500, 256), counting(50, 256), 256);
  const auto s = load_tokens(options("corpus:tiny"), kVocab, 8, 1, 0, true);
  EXPECT_EQ(s.tokens->size(), 500u);
  EXPECT_EQ(s.val_tokens->size(), 50u);
  EXPECT_EQ(s.vocab_size, 256);
  EXPECT_EQ(s.format, TokenFileFormat::NanoGPT);
  const auto& p = s.provenance;
  EXPECT_EQ(p["kind"], "corpus");
  EXPECT_EQ(p["val"], "file");
  EXPECT_EQ(p["tokenizer"], "bytes");
  EXPECT_EQ(p["corpus"]["name"], "tiny");
  EXPECT_EQ(p["corpus"]["source"]["packages"]["fortunes"], "1:1.99.1-7.3");
  EXPECT_EQ(p["files"][0]["path"], (dir / "corpora/tiny/train.bin").string());
}

TEST_F(Data, ACorpusChangedSinceItWasBuiltMustBeRebuilt) {
  build_corpus("tiny", counting(500, 256), counting(50, 256), 256);
  raw("corpora/tiny/train.bin", counting(500, 200));
  expect_error([] { load_tokens(options("corpus:tiny"), kVocab, 8, 1, 0); }, "changed since it was built");
}

}  // namespace
}  // namespace stepwise::bench
