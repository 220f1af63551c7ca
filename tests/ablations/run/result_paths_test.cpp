// Where result files go: the run's folder from --out, --resume or the run id, the suite's folder in it, a single
// --out FILE.json with its Python rows beside it.
#include "ablations/run/result_paths.h"
#include "bench/source_dir.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

PlannedConfig config(size_t index, const std::string& label) {
  PlannedConfig p;
  p.index = index;
  p.row.label = label;
  return p;
}

TEST(ResultPaths, ASuiteGoesIntoItsFolderUnderTheRunsFolder) {
  const ResultPaths paths(std::nullopt, std::nullopt, "run1", "raschka");
  EXPECT_EQ(paths.folder(), bench::source_dir() / "results" / "run1" / "raschka");
  EXPECT_EQ(paths.of(config(3, "fused AdamW"), "libtorch").filename(), "03_fused_adamw.json");
  EXPECT_EQ(paths.of(config(3, "fused AdamW"), "python-eager").filename(), "03_fused_adamw.python-eager.json");
}

TEST(ResultPaths, OutAndResumeNameTheRunsFolder) {
  EXPECT_EQ(ResultPaths(std::string("/tmp/out"), std::nullopt, "run1", "karpathy").folder(),
            std::filesystem::path("/tmp/out/karpathy"));
  EXPECT_EQ(ResultPaths(std::nullopt, std::filesystem::path("/tmp/earlier"), "run1", "karpathy").folder(),
            std::filesystem::path("/tmp/earlier/karpathy"));
}

TEST(ResultPaths, ASingleFileTakesTheEngineRowAndItsPythonRowsGoBesideIt) {
  const ResultPaths paths(std::string("/tmp/x/r.json"), std::nullopt, "run1", "single");
  EXPECT_EQ(paths.folder(), std::filesystem::path("/tmp/x"));
  EXPECT_EQ(paths.shown(), std::filesystem::path("/tmp/x/r.json"));
  EXPECT_EQ(paths.of(config(0, "bf16+flash"), "libtorch"), std::filesystem::path("/tmp/x/r.json"));
  EXPECT_EQ(paths.of(config(0, "bf16+flash"), "python-compile"), std::filesystem::path("/tmp/x/r.python-compile.json"));
}

}  // namespace
}  // namespace stepwise::ablations
