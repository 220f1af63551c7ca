// The model's dimensions from the command line over the preset's, each bad shape a usage error naming it, and the
// vocabulary the data declares.
#include "ablations/command_line/resolve.h"
#include "tests/ablations/command_line/command_line_support.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

Request resolved(std::vector<std::string> args) {
  args.insert(args.begin(), "--device=cpu");
  auto r = testing::parse(std::move(args));
  resolve_run(r, single_configuration({}, false));
  return r;
}

void expect_usage_error(std::vector<std::string> args, const std::string& fragment) {
  testing::expect_usage_error([](auto a) { return resolved(std::move(a)); }, std::move(args), fragment);
}

bench::TokenSource declaring(int64_t vocab) {
  bench::TokenSource s;
  s.vocab_size = vocab;
  s.provenance = {{"vocab_source", "meta.pkl"}};
  return s;
}

TEST(CliModelDimensions, ThePresetsUnlessTheCommandLineSetsThem) {
  const auto plain = resolved({"--preset=tiny"});
  EXPECT_EQ(plain.run.model.n_layer(), 2);
  EXPECT_EQ(plain.run.model.vocab_size(), model::kGpt2VocabSize);
  const auto r = resolved({"--preset=tiny", "--n-layer=3", "--n-head=4", "--n-embd=96", "--context-length=256",
                           "--vocab-size=65", "--dropout=0"});
  const auto& m = r.run.model;
  EXPECT_EQ(m.n_layer(), 3);
  EXPECT_EQ(m.n_head(), 4);
  EXPECT_EQ(m.n_embd(), 96);
  EXPECT_EQ(m.context_length(), 256);
  EXPECT_EQ(m.vocab_size(), 65);
  EXPECT_EQ(m.dropout(), 0.0);
  EXPECT_EQ(r.run.preset, "tiny") << "the preset's name stays; the dimensions are in config.model";
}

TEST(CliModelDimensions, HeadsMustDivideTheWidth) {
  expect_usage_error({"--preset=tiny", "--n-head=3"}, "n_head 3 (--n-head) must divide n_embd 64 (preset tiny's)");
  expect_usage_error({"--preset=tiny", "--n-embd=100", "--n-head=8"}, "n_embd 100 (--n-embd)");
}

TEST(CliModelDimensions, TheSequenceMustFitTheContext) {
  expect_usage_error({"--preset=tiny", "--seq-len=200"},
                     "--seq-len 200 is longer than preset tiny's context length 128 (--context-length sets another)");
  expect_usage_error({"--preset=tiny", "--context-length=32", "--seq-len=64"},
                     "--seq-len 64 is longer than the context length 32 (--context-length)");
  // Without --seq-len, the preset's sequence shrinks to a shorter context.
  EXPECT_EQ(resolved({"--preset=tiny", "--context-length=32"}).run.seq_len, 32);
}

TEST(CliModelDimensions, NonPositiveDimensionsAreUsageErrors) {
  EXPECT_THROW(resolved({"--n-layer=0"}), UsageError);
  EXPECT_THROW(resolved({"--vocab-size=-1"}), UsageError);
}

TEST(CliModelDimensions, TheModelTakesTheDataVocabularyUnlessVocabSizeIsGiven) {
  auto r = resolved({"--preset=tiny"});
  take_data_vocabulary(r, declaring(65));
  EXPECT_EQ(r.run.model.vocab_size(), 65);

  auto larger = resolved({"--preset=tiny", "--vocab-size=128"});
  take_data_vocabulary(larger, declaring(65));
  EXPECT_EQ(larger.run.model.vocab_size(), 128) << "a larger vocabulary than the data's is a choice, not an error";

  auto smaller = resolved({"--preset=tiny", "--vocab-size=50"});
  try {
    take_data_vocabulary(smaller, declaring(65));
    FAIL() << "a vocabulary smaller than the data's must be refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--vocab-size 50 is smaller than the data's vocabulary 65 (declared in its "
                                         "meta.pkl)"),
              std::string::npos)
        << e.what();
  }

  auto undeclared = resolved({"--preset=tiny"});
  take_data_vocabulary(undeclared, bench::TokenSource{});
  EXPECT_EQ(undeclared.run.model.vocab_size(), model::kGpt2VocabSize);
}

}  // namespace
}  // namespace stepwise::ablations
