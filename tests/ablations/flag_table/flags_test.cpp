// The flag table: the ten flags in Raschka's order and the two memory flags after them, complete entries whose code
// locations exist and name the flag, parsing, preconditions, and that each flag switches exactly the RunConfig field of
// its own name.
#include "ablations/flag_table/flags.h"
#include "ablations/run/plan.h"
#include "bench/source_dir.h"

#include "tests/support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace stepwise::ablations {
namespace {

TEST(FlagTable, TheTenFlagsInRaschkasOrderThenTheMemoryHostFp8ShardingAndLearningFlagsEachFullyDeclared) {
  const std::vector<std::string> speed{"dynamic_mask",  "tf32",       "fused_adamw",    "pinned_memory", "bf16",
                                       "native_layers", "flash",      "compile",        "vocab_padding", "max_batch",
                                       "checkpoint",    "chunked_ce", "host_allocator", "fp8",           "zero1"};
  // The speedrun's, in the order its records added them (#2, #3, #5, #9).
  const std::vector<std::string> learning{"rotary",         "trapezoid", "muon",         "relu2",
                                          "zero_init_proj", "qk_norm",   "logit_softcap"};
  auto expected = speed;
  expected.insert(expected.end(), learning.begin(), learning.end());
  EXPECT_EQ(flag_names(), expected);
  // "all" is every flag that keeps the function's purpose: the learning ones are asked for by name.
  EXPECT_EQ(all_flag_names(), speed);
  for (const auto& name : learning) EXPECT_EQ(find_flag(name)->math, MathClass::Learning) << name;
  for (const auto* f : flag_table()) {
    EXPECT_FALSE(f->summary.empty()) << f->name;
    EXPECT_FALSE(f->reference.empty()) << f->name;
    EXPECT_FALSE(f->stage.empty()) << f->name;
    EXPECT_NE(f->apply, nullptr) << f->name;
    if (f->applies == Applies::CudaOnly) {
      EXPECT_FALSE(f->precondition.empty()) << f->name << " must say what it needs";
    }
  }
}

TEST(FlagTable, EachFlagsCodeLivesWhereItSaysAndGrepsByItsName) {
  // --list-flags --verbose prints these paths: each must exist, the first must be the flag's own component, and every
  // one must mention the flag by its name, so grepping one name finds the whole effect.
  for (const auto* f : flag_table()) {
    ASSERT_FALSE(f->code.empty()) << f->name;
    EXPECT_EQ(f->code.front(), "ablations/flags/" + std::string(f->name) + ".cpp");
    for (const auto& path : f->code) {
      std::ifstream in(bench::source_dir() / path);
      ASSERT_TRUE(in) << f->name << ": " << path << " does not exist";
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_NE(text.str().find(f->name), std::string::npos) << path << " never names " << f->name;
    }
  }
}

TEST(FlagTable, TheBaselineIsAllOffAndEachFlagChangesItsOwnField) {
  const auto base = with_flags(testing::tiny_cpu_run(), {});
  EXPECT_FALSE(base.model.dynamic_mask() || base.model.native_layers() || base.model.flash() ||
               base.model.vocab_padding() || base.model.checkpoint() || base.model.chunked_ce());
  EXPECT_FALSE(base.tf32 || base.fused_adamw || base.pinned_memory || base.bf16 || base.compile || base.max_batch);
  EXPECT_EQ(base.optimizer(), base.adamw_baseline);

  auto on = [](const char* name) { return with_flags(testing::tiny_cpu_run(), {name}); };
  EXPECT_TRUE(on("dynamic_mask").model.dynamic_mask());
  EXPECT_TRUE(on("tf32").tf32);
  EXPECT_TRUE(on("fused_adamw").fused_adamw);
  EXPECT_EQ(on("fused_adamw").optimizer(), bench::AdamWKind::Fused);
  EXPECT_TRUE(on("pinned_memory").pinned_memory);
  EXPECT_TRUE(on("bf16").bf16);
  EXPECT_TRUE(on("native_layers").model.native_layers());
  EXPECT_TRUE(on("flash").model.flash());
  EXPECT_TRUE(on("compile").compile);
  EXPECT_TRUE(on("vocab_padding").model.vocab_padding());
  EXPECT_TRUE(on("max_batch").max_batch);
  EXPECT_TRUE(on("checkpoint").model.checkpoint());
  EXPECT_FALSE(on("checkpoint").model.chunked_ce());
  EXPECT_TRUE(on("chunked_ce").model.chunked_ce());
  EXPECT_FALSE(on("chunked_ce").model.checkpoint());
  // Both change what the loss is summed over or recomputes in another order: the fp32 class, never exact.
  EXPECT_EQ(math_class({"checkpoint"}), MathClass::Fp32);
  EXPECT_EQ(math_class({"chunked_ce"}), MathClass::Fp32);
}

TEST(FlagTable, OptionsSayHowAFlagActs) {
  auto base = testing::tiny_cpu_run();
  base.bf16_mode = bench::Bf16Mode::Autocast;
  base.pinned_mode = bench::PinnedMode::Blocking;
  base.model.sdpa_backend(model::SdpaBackend::Math);
  base.model.checkpoint_mode(model::CheckpointMode::Selective).ce_chunk_rows(64);
  const auto c = with_flags(base, {"bf16", "pinned_memory", "flash", "checkpoint", "chunked_ce"});
  EXPECT_EQ(c.model.checkpoint_mode(), model::CheckpointMode::Selective);
  EXPECT_EQ(c.model.ce_chunk_rows(), 64);
  EXPECT_EQ(c.bf16_mode, bench::Bf16Mode::Autocast);
  EXPECT_EQ(c.pinned_mode, bench::PinnedMode::Blocking);
  EXPECT_EQ(c.model.sdpa_backend(), model::SdpaBackend::Math);
}

TEST(ParseFlagList, OrderNormalisedAllExpandsAndErrorsNameTheValidFlags) {
  EXPECT_EQ(parse_flag_list("flash,bf16"), (std::vector<std::string>{"bf16", "flash"}));
  EXPECT_EQ(parse_flag_list(" bf16 , flash "), (std::vector<std::string>{"bf16", "flash"}));
  EXPECT_EQ(parse_flag_list("all"), all_flag_names());
  EXPECT_TRUE(parse_flag_list("").empty());
  try {
    parse_flag_list("bf16,fp4");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown flag 'fp4'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("dynamic_mask"), std::string::npos);
  }
  EXPECT_THROW(parse_flag_list("bf16,bf16"), std::invalid_argument);
}

TEST(Preconditions, CudaOnlyFlagsSayWhyOnTheCpu) {
  const c10::Device cpu(c10::kCPU), gpu(c10::kCUDA, 0);
  for (const char* name : {"tf32", "pinned_memory", "compile"}) {
    const auto why = unmet_precondition(*find_flag(name), cpu);
    ASSERT_TRUE(why) << name;
    EXPECT_EQ(why->rfind("requires a CUDA device", 0), 0u) << *why;
    EXPECT_FALSE(unmet_precondition(*find_flag(name), gpu)) << name;
  }
  for (const char* name : {"dynamic_mask", "fused_adamw", "bf16", "native_layers", "flash", "vocab_padding",
                           "max_batch", "checkpoint", "chunked_ce", "host_allocator"})
    EXPECT_FALSE(unmet_precondition(*find_flag(name), cpu)) << name;
}

TEST(Preconditions, Fp8NeedsFp8TensorCoresAndBf16BesideIt) {
  const auto& fp8 = *find_flag("fp8");
  const auto why = unmet_precondition(fp8, c10::Device(c10::kCPU));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("compute capability 8.9"), std::string::npos) << *why;
  EXPECT_EQ(fp8.min_compute_capability, std::make_pair(8, 9));
  EXPECT_EQ(math_class({"bf16", "fp8"}), MathClass::Fp8);
  // Planned for a CUDA device (no GPU is needed to plan): without bf16 beside it, fp8 is skipped naming what to add
  // and the rest of the configuration runs; fp8 alone is a step with nothing left to change, skipped whole.
  auto base = testing::tiny_cpu_run();
  base.device = c10::Device(c10::kCUDA, 0);
  const auto all_but_bf16 = plan_suite(single_configuration({"flash", "fp8"}, true), base);
  EXPECT_EQ(all_but_bf16[1].effective, std::vector<std::string>{"flash"});
  ASSERT_EQ(all_but_bf16[1].skipped_flags.size(), 1u);
  EXPECT_NE(all_but_bf16[1].skipped_flags[0].second.find("--enable=bf16,fp8"), std::string::npos);
  EXPECT_FALSE(all_but_bf16[1].skip_reason);
  const auto alone = plan_suite(single_configuration({"fp8"}, true), base);
  ASSERT_TRUE(alone[1].skip_reason);
  EXPECT_NE(alone[1].skip_reason->find("needs bf16"), std::string::npos);
  const auto with_bf16 = plan_suite(single_configuration({"bf16", "fp8"}, true), base);
  EXPECT_EQ(with_bf16[1].effective, (std::vector<std::string>{"bf16", "fp8"}));
  EXPECT_TRUE(with_bf16[1].run.model.fp8());
}

TEST(Preconditions, Zero1NeedsDataParallelRanks) {
  const auto& zero1 = *find_flag("zero1");
  const c10::Device cpu(c10::kCPU);
  const auto why = unmet_precondition(zero1, cpu, /*world_size=*/1);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("--nproc-per-node"), std::string::npos) << *why;
  EXPECT_FALSE(unmet_precondition(zero1, cpu, 2));
  // A single process plans the flag as skipped and runs the rest of the configuration.
  auto base = testing::tiny_cpu_run();
  const auto planned = plan_suite(single_configuration({"fused_adamw", "zero1"}, true), base);
  ASSERT_EQ(planned.size(), 2u);
  EXPECT_EQ(planned[1].effective, std::vector<std::string>{"fused_adamw"});
  ASSERT_EQ(planned[1].skipped_flags.size(), 1u);
  EXPECT_EQ(planned[1].skipped_flags[0].first, "zero1");
  base.world_size = 2;
  EXPECT_EQ(plan_suite(single_configuration({"zero1"}, true), base)[1].effective, std::vector<std::string>{"zero1"});
}

}  // namespace
}  // namespace stepwise::ablations
