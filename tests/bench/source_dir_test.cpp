// bench/source_dir.h: a prebuilt binary finds the checkout it runs in — $STEPWISE_SOURCE_DIR when set (what
// scripts/verify-gpu.sh exports on a node), else the tree it was built from while that exists.
#include "bench/source_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace stepwise::bench {
namespace {

TEST(SourceDir, TheEnvironmentNamesTheCheckoutElseTheBuiltTreeServes) {
  unsetenv("STEPWISE_SOURCE_DIR");
  const auto built = locate_source_dir();  // the tree this test was built from, which is here
  EXPECT_TRUE(std::filesystem::is_directory(built / "ablations" / "suites")) << built;
  EXPECT_TRUE(std::filesystem::exists(built / "bench" / "source_dir.h")) << built;
  setenv("STEPWISE_SOURCE_DIR", "/srv/another/checkout", 1);
  EXPECT_EQ(locate_source_dir(), std::filesystem::path("/srv/another/checkout"));
  unsetenv("STEPWISE_SOURCE_DIR");
}

}  // namespace
}  // namespace stepwise::bench
