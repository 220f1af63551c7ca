// Token files (nanoGPT raw uint16, llm.c .bin) and their validation, and the synthetic source.
#include "bench/tokens.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <fstream>
#include <map>

namespace stepwise::bench {
namespace {

constexpr int64_t kVocab = 50257;

class TokenFiles : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("stepwise-tokens-" + std::to_string(getpid()));
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::filesystem::path write(const std::string& name, const std::vector<int32_t>& header,
                              const std::vector<uint16_t>& tokens, size_t extra_bytes = 0) {
    const auto path = dir / name;
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size() * 4));
    out.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size() * 2));
    out << std::string(extra_bytes, '\0');
    return path;
  }
  static std::vector<int32_t> llmc_header(int32_t count, int32_t magic = kLlmcMagic, int32_t version = kLlmcVersion) {
    std::vector<int32_t> h(kLlmcHeaderInts, 0);
    h[0] = magic;
    h[1] = version;
    h[2] = count;
    return h;
  }
  static void expect_error(const std::filesystem::path& path, TokenFileFormat format, const std::string& fragment) {
    try {
      read_token_file(path, format, kVocab);
      FAIL() << "expected an error containing '" << fragment << "'";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << "the message names the file";
    }
  }
};

TEST_F(TokenFiles, NanoGptRawUint16) {
  const auto path = write("train.bin", {}, {1, 2, 3, 50256});
  const auto f = read_token_file(path, TokenFileFormat::Auto, kVocab);
  EXPECT_EQ(f.format, TokenFileFormat::NanoGPT);
  EXPECT_EQ(f.tokens, (Tokens{1, 2, 3, 50256}));
}

TEST_F(TokenFiles, LlmcHeaderThenTokens) {
  const auto path = write("llmc.bin", llmc_header(3), {7, 8, 9});
  const auto f = read_token_file(path, TokenFileFormat::Auto, kVocab);
  EXPECT_EQ(f.format, TokenFileFormat::LlmC);
  EXPECT_EQ(f.tokens, (Tokens{7, 8, 9}));
  EXPECT_EQ(read_token_file(path, TokenFileFormat::LlmC, kVocab).tokens, (Tokens{7, 8, 9}));
}

TEST_F(TokenFiles, Missing) { expect_error(dir / "nope.bin", TokenFileFormat::Auto, "does not exist"); }

TEST_F(TokenFiles, Empty) { expect_error(write("empty.bin", {}, {}), TokenFileFormat::Auto, "is empty"); }

TEST_F(TokenFiles, RawWithAnOddByteCountIsTruncated) {
  expect_error(write("odd.bin", {}, {1, 2}, 1), TokenFileFormat::NanoGPT, "truncated");
}

TEST_F(TokenFiles, LlmcShorterThanItsHeaderSaysIsTruncated) {
  expect_error(write("short.bin", llmc_header(10), {1, 2, 3}), TokenFileFormat::Auto,
               "header says 10 tokens, file holds 3");
}

TEST_F(TokenFiles, LlmcShorterThanTheHeaderIsTruncated) {
  expect_error(write("tiny.bin", {kLlmcMagic, 1}, {}), TokenFileFormat::LlmC, "shorter than llm.c's 1024-byte header");
}

TEST_F(TokenFiles, WrongMagic) {
  expect_error(write("magic.bin", llmc_header(3, 12345), {1, 2, 3}), TokenFileFormat::LlmC, "wrong magic 12345");
}

TEST_F(TokenFiles, WrongVersion) {
  expect_error(write("version.bin", llmc_header(3, kLlmcMagic, 2), {1, 2, 3}), TokenFileFormat::Auto,
               "unsupported llm.c version 2");
}

TEST_F(TokenFiles, TokenOutsideTheVocabulary) {
  expect_error(write("vocab.bin", {}, {1, 60000}), TokenFileFormat::NanoGPT, "token 60000 at position 1");
}

TEST_F(TokenFiles, ADirectoryIsNotATokenFile) { expect_error(dir, TokenFileFormat::Auto, "not a regular file"); }

TEST(TokenFileFormat, NamesRoundTrip) {
  for (auto f : {TokenFileFormat::Auto, TokenFileFormat::NanoGPT, TokenFileFormat::LlmC})
    EXPECT_EQ(token_file_format_from_string(to_string(f)), f);
  EXPECT_THROW(token_file_format_from_string("parquet"), std::invalid_argument);
}

TEST(SyntheticTokens, DeterministicPerSeedAndInsideTheVocabulary) {
  const auto a = synthetic_tokens(10000, kVocab, 1), b = synthetic_tokens(10000, kVocab, 1);
  const auto c = synthetic_tokens(10000, kVocab, 2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (auto t : a) ASSERT_LT(t, kVocab);
}

TEST(SyntheticTokens, NextTokenIsFarMorePredictableThanTheUnigram) {
  // The structure a model can learn: the bigram entropy is far below the unigram one.
  const auto t = synthetic_tokens(200000, kVocab, 3);
  std::map<uint16_t, double> unigram;
  std::map<std::pair<uint16_t, uint16_t>, double> bigram;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    unigram[t[i]] += 1;
    bigram[{t[i], t[i + 1]}] += 1;
  }
  const double n = static_cast<double>(t.size() - 1);
  double h_unigram = 0, h_joint = 0;
  for (const auto& [k, c] : unigram) h_unigram -= c / n * std::log(c / n);
  for (const auto& [k, c] : bigram) h_joint -= c / n * std::log(c / n);
  const double h_conditional = h_joint - h_unigram;
  EXPECT_GT(h_unigram, 5.0);
  EXPECT_LT(h_conditional, 1.5);
}

}  // namespace
}  // namespace stepwise::bench
