// The options no other test exercised, each from the command line to the RunConfig it produces, and a bad value's
// message: fp8's three, the learning-rate schedule's four, --val-data. Then the renamed options (--min-steps and
// --target-seeds, whose old names still work), and --help's groups with the internal options hidden.
#include "ablations/command_line/cli.h"
#include "ablations/command_line/resolve.h"
#include "ablations/flag_table/flags.h"
#include "ablations/run/suite.h"
#include "bench/data/source.h"
#include "tests/ablations/command_line/command_line_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace stepwise::ablations {
namespace {

using testing::parse;

// The RunConfig a single configuration (the baseline, or --enable's) starts from on the CPU, as ./ablate resolves it.
bench::RunConfig resolved(std::vector<std::string> args) {
  args.insert(args.begin(), {"--device=cpu", "--preset=tiny"});
  auto r = parse(std::move(args));
  resolve_run(r, single_configuration(r.enable, false));
  return r.run;
}

// The same, for the suite (--suite) or the configuration (--enable) the arguments name.
bench::RunConfig resolved_for(std::vector<std::string> args) {
  args.insert(args.begin(), {"--device=cpu", "--preset=tiny"});
  auto r = parse(std::move(args));
  resolve_run(r, r.suite.empty() ? single_configuration(r.enable, false) : find_suite(r.suite));
  return r.run;
}

void expect_usage_error(std::vector<std::string> args, const std::string& fragment) {
  testing::expect_usage_error([](auto a) { return resolved(std::move(a)); }, std::move(args), fragment);
}

void expect_usage_error_for(std::vector<std::string> args, const std::string& fragment) {
  testing::expect_usage_error([](auto a) { return resolved_for(std::move(a)); }, std::move(args), fragment);
}

TEST(Fp8Options, ScalingHeadAndEveryLayerReachTheModel) {
  const auto plain = resolved({});
  EXPECT_EQ(plain.model.fp8_scaling(), model::Fp8Scaling::Tensorwise);
  EXPECT_FALSE(plain.model.fp8_head());
  EXPECT_FALSE(plain.model.fp8_every_layer());
  const auto set = resolved({"--enable=fp8", "--fp8-scaling=rowwise", "--fp8-head", "--fp8-every-layer"});
  EXPECT_EQ(set.model.fp8_scaling(), model::Fp8Scaling::Rowwise);
  EXPECT_TRUE(set.model.fp8_head());
  EXPECT_TRUE(set.model.fp8_every_layer());
  // The options say how fp8 acts; they never switch it on.
  EXPECT_FALSE(set.model.fp8());
}

TEST(Fp8Options, BadValuesNameTheOptionAndTheValidOnes) {
  expect_usage_error({"--fp8-scaling=blockwise"},
                     "--fp8-scaling: unknown fp8 scaling 'blockwise' (valid: tensorwise, rowwise)");
  expect_usage_error({"--fp8-head=maybe"}, "--fp8-head");
}

// The speedrun flags' options: each reaches the RunConfig, and a bad value names the option and what it takes.
TEST(SpeedrunOptions, ReachTheRunConfigAndBadValuesNameTheOptionAndTheValidOnes) {
  const auto given = resolved({"--enable=muon,logit_softcap,trapezoid", "--muon-lr=0.05", "--muon-momentum=0.9",
                               "--muon-scale=none", "--muon-ns-dtype=fp32", "--softcap=15", "--lr-cooldown-steps=7"});
  EXPECT_DOUBLE_EQ(given.muon_options.lr(), 0.05);
  EXPECT_DOUBLE_EQ(given.muon_options.momentum(), 0.9);
  EXPECT_EQ(given.muon_options.scale(), bench::MuonScale::None);
  EXPECT_EQ(given.muon_options.ns_dtype(), bench::MuonNsDtype::Float32);
  EXPECT_DOUBLE_EQ(given.model.softcap(), 15);
  EXPECT_EQ(given.lr_schedule.cooldown_steps, 7);
  expect_usage_error({"--enable=muon", "--muon-momentum=1.5"},
                     "--muon-momentum must be a fraction in [0, 1) (got '1.5')");
  expect_usage_error({"--enable=muon", "--muon-lr=0"}, "--muon-lr must be a positive number");
  expect_usage_error({"--enable=logit_softcap", "--softcap=-3"}, "--softcap must be a positive number");
  expect_usage_error({"--muon-scale=sqrt"}, "valid: none, sqrt_max_dim, sqrt_out_over_in");
  expect_usage_error({"--muon-ns-dtype=fp16"}, "valid: auto, bf16, fp32");
  expect_usage_error({"--lr-schedule=linear"}, "--lr-schedule");
}

TEST(LrScheduleOptions, CosineWithItsWarmUpDecayAndFloor) {
  const auto plain = resolved({});
  EXPECT_EQ(plain.lr_schedule.kind, bench::LrScheduleKind::Constant);
  const auto cosine = resolved(
      {"--lr-schedule=cosine", "--lr-warmup-steps=5", "--lr-decay-steps=40", "--lr-min-ratio=0.25", "--warmup=2"});
  EXPECT_EQ(cosine.lr_schedule.kind, bench::LrScheduleKind::Cosine);
  EXPECT_EQ(cosine.lr_schedule.warmup_steps, 5);
  EXPECT_EQ(cosine.lr_schedule.decay_steps, 40);
  EXPECT_DOUBLE_EQ(cosine.lr_schedule.min_ratio, 0.25);
  // Without --lr-decay-steps the decay ends at the last step the run can take: the warm-up and --max-steps.
  const auto to_the_end = resolved({"--lr-schedule=cosine", "--warmup=2", "--max-steps=30"});
  EXPECT_EQ(to_the_end.lr_schedule.decay_steps, 32);
  EXPECT_DOUBLE_EQ(to_the_end.lr_schedule.min_ratio, 0.1);
}

TEST(LrScheduleOptions, BadValuesAndTheShapeWithoutCosineOrTrapezoid) {
  expect_usage_error({"--lr-schedule=linear"}, "--lr-schedule");
  expect_usage_error({"--lr-schedule=cosine", "--lr-warmup-steps=-1"},
                     "--lr-warmup-steps must be zero or a positive integer (got '-1')");
  expect_usage_error({"--lr-schedule=cosine", "--lr-decay-steps=0"},
                     "--lr-decay-steps must be a positive integer (got '0')");
  expect_usage_error({"--lr-schedule=cosine", "--lr-min-ratio=1.5"},
                     "--lr-min-ratio must be a fraction in [0, 1] (got '1.5')");
  for (const char* option : {"--lr-warmup-steps=5", "--lr-decay-steps=40", "--lr-min-ratio=0.25"})
    expect_usage_error({option}, "shape --lr-schedule=cosine or trapezoid; add one");
  // The trapezoid has one spelling, the flag, and its cool-down is the flag's option.
  expect_usage_error({"--lr-schedule=trapezoid"}, "the trapezoid is a flag: give --enable=trapezoid");
  expect_usage_error({"--lr-cooldown-steps=5"}, "--lr-cooldown-steps is an option of the trapezoid flag");
}

// Every flag's every option, given without its flag, is refused naming the flag to enable (the declaration's rule,
// not one written per option): --softcap=15 alone would otherwise train the baseline and say nothing.
TEST(FlagOptions, AnOptionWithoutItsFlagIsAUsageErrorNamingTheFlag) {
  size_t options = 0;
  for (const auto* flag : flag_table())
    for (const auto& o : flag->options) {
      if (o.acts_while_off) {  // the reference's own (--adamw-baseline): taken without the flag
        EXPECT_NO_THROW(resolved({o.cli_name() + "=" + o.choices.back()})) << o.cli_name();
        continue;
      }
      // A valid value of each: a choice's last, a fraction's half, else 1.
      const std::string value = o.is_switch          ? ""
                                : !o.choices.empty() ? "=" + o.choices.back()
                                : o.below            ? "=0.5"
                                                     : "=1";
      expect_usage_error({o.cli_name() + value}, o.cli_name() + " is an option of the " + std::string(flag->name) +
                                                     " flag, which no configuration of this run enables: add "
                                                     "--enable=" +
                                                     std::string(flag->name));
      EXPECT_NO_THROW(resolved({"--enable=" + std::string(flag->name), o.cli_name() + value})) << o.cli_name();
      ++options;
    }
  EXPECT_GE(options, 20u) << "every flag option is covered";
  expect_usage_error_for({"--suite=speedrun", "--disable=logit_softcap", "--softcap=15"},
                         "--disable takes out of every configuration of this run");
  // A suite that runs the flag in one of its steps takes the option.
  EXPECT_NO_THROW(resolved_for({"--suite=speedrun", "--softcap=15", "--muon-lr=0.01", "--lr-cooldown-steps=3"}));
  expect_usage_error_for({"--suite=karpathy", "--softcap=15"}, "(or run a suite that has it)");
}

class ValData : public ::testing::Test {
 protected:
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("stepwise-val-data-" + std::to_string(getpid()));
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }

  // nanoGPT's raw uint16 tokens: `n` of them, all `id`.
  std::string tokens(const std::string& name, size_t n, uint16_t id) {
    const auto path = dir / name;
    const bench::Tokens t(n, id);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.size() * sizeof(uint16_t)));
    return path.string();
  }

  bench::TokenSource load(const bench::RunConfig& run) {
    return bench::load_tokens(run.data, run.model.vocab_size(), run.seq_len, run.batch_size, run.seed,
                              /*need_validation=*/true);
  }
};

TEST_F(ValData, TheValidationStreamIsTheFileGivenNeverTheTrainingTail) {
  const auto train = tokens("train_tokens.bin", 4096, 1), val = tokens("held_out.bin", 1024, 2);
  const auto run = resolved({"--data=" + train, "--val-data=" + val, "--target-loss=3"});
  ASSERT_EQ(run.data.val_path, val);
  const auto source = load(run);
  EXPECT_EQ(source.provenance["val"], "file");
  EXPECT_EQ(source.provenance["val_files"][0]["path"], val);
  ASSERT_TRUE(source.val_tokens);
  EXPECT_EQ(*source.val_tokens, bench::Tokens(1024, 2)) << "the validation tokens are the file's";
  EXPECT_EQ(source.tokens->size(), 4096u) << "none of the training stream is held out";
}

TEST_F(ValData, AMissingFileOrAGlobMatchingNothingIsNamed) {
  const auto train = tokens("train_tokens.bin", 4096, 1);
  const auto missing = (dir / "missing.bin").string();
  try {
    load(resolved({"--data=" + train, "--val-data=" + missing, "--target-loss=3"}));
    FAIL() << "a missing validation file must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "token file " + missing + ": does not exist");
  }
  const auto glob = (dir / "val_*.bin").string();
  try {
    load(resolved({"--data=" + train, "--val-data=" + glob, "--target-loss=3"}));
    FAIL() << "a glob that matches nothing must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "no token file matches " + glob);
  }
}

TEST(RenamedOptions, TheNewNameAndTheOldOneSetTheSameOptionButNotBoth) {
  EXPECT_EQ(resolved({"--min-steps=7"}).timing.stop.min_steps, 7u);
  EXPECT_EQ(resolved({"--steps=7"}).timing.stop.min_steps, 7u);
  EXPECT_EQ(resolved({"--target-seeds=5", "--target-loss=3"}).target->seeds, 5);
  EXPECT_EQ(resolved({"--seeds=5", "--target-loss=3"}).target->seeds, 5);
  EXPECT_EQ(resolved({"--target-loss=3"}).target->seeds, bench::TargetOptions{}.seeds);
  expect_usage_error({"--min-steps=7", "--steps=8"}, "--steps is the old name of --min-steps");
  expect_usage_error({"--target-seeds=2", "--seeds=3", "--target-loss=3"}, "--seeds is the old name of --target-seeds");
  // A bad value names the option as it was spelled.
  expect_usage_error({"--steps=0"}, "--steps must be a positive integer");
  expect_usage_error({"--target-seeds=0"}, "--target-seeds must be a positive integer");
}

// The speedrun's record rule: --step-budget and --record-p reach the target options, and only with --target-loss; a
// budget beyond the step cap, a level outside (0, 1) or a budget of 0 are usage errors naming the option.
TEST(RecordRuleOptions, BudgetAndLevelReachTheTargetOptions) {
  const auto plain = resolved({"--target-loss=3"});
  EXPECT_FALSE(plain.target->step_budget);
  EXPECT_DOUBLE_EQ(plain.target->record_p, 0.01);
  const auto given = resolved({"--target-loss=3", "--step-budget=150", "--record-p=0.05", "--max-steps=200"});
  EXPECT_EQ(*given.target->step_budget, 150);
  EXPECT_DOUBLE_EQ(given.target->record_p, 0.05);
  // Judged where it is asked for, or where a suite runs the speedrun's techniques; the speed flags' rows are not
  // re-run to a budget for a rule they are not meant to meet.
  EXPECT_FALSE(plain.target->record_rule);
  EXPECT_TRUE(given.target->record_rule);
  EXPECT_TRUE(resolved({"--target-loss=3", "--record-p=0.01", "--step-budget=100"}).target->record_rule);
  expect_usage_error({"--target-loss=3", "--record-p=0.01"}, "add --step-budget");
  EXPECT_TRUE(resolved_for({"--target-loss=3", "--suite=speedrun"}).target->record_rule);
  EXPECT_TRUE(resolved_for({"--target-loss=3", "--enable=muon"}).target->record_rule);
  EXPECT_FALSE(resolved_for({"--target-loss=3", "--suite=one_at_a_time"}).target->record_rule);
  EXPECT_FALSE(resolved_for({"--target-loss=3", "--enable=flash"}).target->record_rule);
  expect_usage_error({"--step-budget=10"}, "--step-budget is for time to a target loss");
  expect_usage_error({"--record-p=0.05"}, "--record-p is for time to a target loss");
  expect_usage_error({"--target-loss=3", "--step-budget=300", "--max-steps=200"}, "beyond the step cap 200");
  expect_usage_error({"--target-loss=3", "--step-budget=0"}, "--step-budget must be a positive integer");
  expect_usage_error({"--target-loss=3", "--record-p=1"}, "--record-p");
  expect_usage_error({"--target-loss=3", "--record-p=0"}, "--record-p");
}

// A target run's schedule ends at its declared horizon, never at the step cap the seeds stop long before: the
// trapezoid's N and the cosine's decay are --step-budget (or the suite's own), a schedule asked for without one is a
// usage error naming --step-budget, and the default without one is a constant rate, said so in the options.
TEST(HorizonOptions, AScheduleThatDecaysEndsAtTheDeclaredHorizonNeverTheStepCap) {
  const auto trapezoid =
      resolved_for({"--target-loss=3", "--enable=trapezoid", "--step-budget=150", "--max-steps=400"});
  EXPECT_EQ(trapezoid.lr_schedule.decay_steps, 150) << "the trapezoid's N is the horizon, not the cap 400";
  EXPECT_EQ(trapezoid.target->budget_from, "--step-budget");
  const auto cosine = resolved({"--target-loss=3", "--lr-schedule=cosine", "--step-budget=120", "--max-steps=400"});
  EXPECT_EQ(cosine.lr_schedule.decay_steps, 120);

  const auto suite = resolved_for({"--target-loss=3", "--suite=speedrun", "--max-steps=400"});
  ASSERT_TRUE(suite.target->step_budget) << "the speedrun suite declares its own horizon at tiny";
  EXPECT_EQ(suite.lr_schedule.decay_steps, *suite.target->step_budget);
  EXPECT_EQ(suite.target->budget_from, "the suite's own for preset tiny");
  EXPECT_EQ(resolved_for({"--target-loss=3", "--suite=speedrun", "--step-budget=90"}).target->step_budget, 90)
      << "--step-budget wins over the suite's own";

  const auto plain = resolved({"--target-loss=3"});
  EXPECT_TRUE(plain.lr_schedule.constant()) << "no horizon declared: no schedule decays over the cap";
  EXPECT_NE(plain.target->budget_from.find("none declared"), std::string::npos) << plain.target->budget_from;

  expect_usage_error_for({"--target-loss=3", "--enable=trapezoid"}, "add --step-budget=N");
  expect_usage_error({"--target-loss=3", "--lr-schedule=cosine"}, "add --step-budget=N");
  expect_usage_error({"--target-loss=3", "--lr-warmup-steps=5"}, "add --step-budget=N");
  expect_usage_error({"--target-loss=3", "--lr-schedule=cosine", "--step-budget=100", "--lr-decay-steps=80"},
                     "drop --lr-decay-steps");
  expect_usage_error_for({"--target-loss=3", "--suite=speedrun", "--max-steps=50"}, "beyond the step cap 50");
}

TEST(Help, ShowsTheOptionsInGroupsAndHidesTheInternalOnes) {
  ::testing::internal::CaptureStdout();
  EXPECT_THROW(parse({"--help"}), HelpRequested);
  const auto help = ::testing::internal::GetCapturedStdout();
  size_t at = 0;
  for (const char* group : {"Flags and their options:", "Model and training:", "Measurement:", "Data:", "Target loss:",
                            "Distributed:", "Output:", "Listing:"}) {
    const auto found = help.find(group, at);
    ASSERT_NE(found, std::string::npos) << group << " missing, or out of order, in:\n" << help;
    at = found;
  }
  EXPECT_NE(help.find("--bf16-mode"), std::string::npos) << "the flags' own options are listed";
  EXPECT_NE(help.find("the old name of --min-steps"), std::string::npos);
  for (const char* internal : {"--row-in-child", "--sweep-point"})
    EXPECT_EQ(help.find(internal), std::string::npos) << internal << " is internal";
}

TEST(Help, TheUnknownOptionMessageListsOnlyWhatAUserMayGive) {
  try {
    parse({"--turbo"});
    FAIL() << "an unknown option must be refused";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--min-steps"), std::string::npos) << what;
    EXPECT_NE(what.find("--bf16-mode"), std::string::npos) << what;
    EXPECT_EQ(what.find("--row-in-child"), std::string::npos) << what;
    EXPECT_EQ(what.find("--sweep-point"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace stepwise::ablations
