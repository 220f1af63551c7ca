// bench/source_dir.h: a prebuilt binary finds the checkout it runs in — $STEPWISE_SOURCE_DIR when set (what
// scripts/verify-gpu.sh exports on a node), else the tree it was built from while that exists.
#include "bench/source_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace stepwise::bench {
namespace {

TEST(SourceDir, TheEnvironmentNamesTheCheckoutElseTheBuiltTreeServes) {
  unsetenv("STEPWISE_SOURCE_DIR");
  EXPECT_EQ(locate_source_dir(), std::filesystem::path(STEPWISE_SOURCE_DIR));
  EXPECT_TRUE(std::filesystem::is_directory(locate_source_dir() / "ablations" / "suites"));
  setenv("STEPWISE_SOURCE_DIR", "/srv/another/checkout", 1);
  EXPECT_EQ(locate_source_dir(), std::filesystem::path("/srv/another/checkout"));
  unsetenv("STEPWISE_SOURCE_DIR");
}

}  // namespace
}  // namespace stepwise::bench
