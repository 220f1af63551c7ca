// The flag table: the ten flags in Raschka's order, complete entries, parsing, preconditions, and that each
// apply function switches exactly what it says.
#include "ablations/flags.h"
#include "ablations/plan.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

TEST(FlagTable, TheTenFlagsInRaschkasOrderEachFullyDeclared) {
  const std::vector<std::string> expected{"dynamic_mask", "tf32",  "fused_adamw", "pinned_memory", "bf16",
                                          "native_layers", "flash", "compile",     "vocab_padding", "max_batch"};
  EXPECT_EQ(flag_names(), expected);
  for (const auto& f : flag_table()) {
    EXPECT_FALSE(f.summary.empty()) << f.name;
    EXPECT_FALSE(f.reference.empty()) << f.name;
    EXPECT_FALSE(f.stage.empty()) << f.name;
    EXPECT_NE(f.apply, nullptr) << f.name;
    if (f.applies == Applies::CudaOnly) EXPECT_FALSE(f.precondition.empty()) << f.name << " must say what it needs";
  }
}

Settings cpu_settings() {
  Settings s;
  s.preset = "tiny";
  s.batch_size = 2;
  s.seq_len = 16;
  return s;
}

TEST(FlagTable, TheBaselineIsAllOffAndEachFlagChangesItsOwnSwitch) {
  const auto base = make_run_config(cpu_settings(), {});
  EXPECT_FALSE(base.model.dynamic_mask() || base.model.native_layers() || base.model.flash() ||
               base.model.vocab_padding());
  EXPECT_FALSE(base.tf32 || base.bf16 || base.cuda_graph || base.max_batch);
  EXPECT_EQ(base.adamw_kind, bench::AdamWKind::Reference);
  EXPECT_EQ(base.copy_mode, bench::CopyMode::Pageable);

  auto on = [](const char* name) { return make_run_config(cpu_settings(), {name}); };
  EXPECT_TRUE(on("dynamic_mask").model.dynamic_mask());
  EXPECT_TRUE(on("tf32").tf32);
  EXPECT_EQ(on("fused_adamw").adamw_kind, bench::AdamWKind::Fused);
  EXPECT_EQ(on("pinned_memory").copy_mode, bench::CopyMode::PinnedAsync);
  EXPECT_TRUE(on("bf16").bf16);
  EXPECT_TRUE(on("native_layers").model.native_layers());
  EXPECT_TRUE(on("flash").model.flash());
  EXPECT_TRUE(on("compile").cuda_graph);
  EXPECT_TRUE(on("vocab_padding").model.vocab_padding());
  EXPECT_TRUE(on("max_batch").max_batch);
}

TEST(FlagTable, OptionsSayHowAFlagActs) {
  auto s = cpu_settings();
  s.flag_options.bf16_mode = bench::Bf16Mode::Autocast;
  s.flag_options.pinned_mode = bench::CopyMode::PinnedBlocking;
  s.flag_options.sdpa_backend = model::SdpaBackend::Math;
  const auto c = make_run_config(s, {"bf16", "pinned_memory", "flash"});
  EXPECT_EQ(c.bf16_mode, bench::Bf16Mode::Autocast);
  EXPECT_EQ(c.copy_mode, bench::CopyMode::PinnedBlocking);
  EXPECT_EQ(c.model.sdpa_backend(), model::SdpaBackend::Math);
}

TEST(ParseFlagList, OrderNormalisedAllExpandsAndErrorsNameTheValidFlags) {
  EXPECT_EQ(parse_flag_list("flash,bf16"), (std::vector<std::string>{"bf16", "flash"}));
  EXPECT_EQ(parse_flag_list(" bf16 , flash "), (std::vector<std::string>{"bf16", "flash"}));
  EXPECT_EQ(parse_flag_list("all").size(), 10u);
  EXPECT_TRUE(parse_flag_list("").empty());
  try {
    parse_flag_list("bf16,fp8");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown flag 'fp8'"), std::string::npos);
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
  for (const char* name : {"dynamic_mask", "fused_adamw", "bf16", "native_layers", "flash", "vocab_padding", "max_batch"})
    EXPECT_FALSE(unmet_precondition(*find_flag(name), cpu)) << name;
}

}  // namespace
}  // namespace stepwise::ablations
