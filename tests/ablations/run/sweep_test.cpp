// --sweep (ablations/run/sweep.h): axes read with clear errors, the product in order with the first axis outermost, and
// the label every result of a point carries.
#include "ablations/run/sweep.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

void expect_error(const std::vector<std::string>& specs, const std::string& needle) {
  try {
    parse_sweep(specs);
    FAIL() << "accepted " << specs.front();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Sweep, BadAxesAndValuesNameTheProblemAndTheValidChoices) {
  expect_error({"width=64,128"}, "valid: preset, seq_len, batch_size");
  expect_error({"preset"}, "AXIS=v1,v2");
  expect_error({"preset=tiny,huge"}, "tiny");  // model::preset names the valid presets
  expect_error({"seq-len=64,x"}, "'x' is not a positive integer");
  expect_error({"batch-size=0"}, "'0' is not a positive integer");
  expect_error({"seq-len=64,,128"}, "empty value");
  expect_error({"seq-len=64,64"}, "'64' twice");
  expect_error({"seq-len=64", "seq_len=128"}, "given twice");
}

TEST(Sweep, PointsAreTheProductWithTheFirstAxisOutermost) {
  const auto axes = parse_sweep({"preset=tiny,mini", "seq-len=32,64,128"});
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(axes[1].name, "seq_len");
  EXPECT_EQ(axes[1].option, "--seq-len");
  const auto points = sweep_points(axes);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0].label(), "preset=tiny, seq_len=32");
  EXPECT_EQ(points[2].label(), "preset=tiny, seq_len=128");
  EXPECT_EQ(points[3].label(), "preset=mini, seq_len=32");
  EXPECT_EQ(points[5].slug(), "preset-mini_seq-len-128");
  EXPECT_EQ(points[5].index, 5u);
}

TEST(Sweep, EveryResultOfAPointCarriesTheSweepAndThePoint) {
  const auto axes = parse_sweep({"preset=tiny,mini", "batch_size=2,4"});
  const auto points = sweep_points(axes);
  const auto j = sweep_json("s1", axes, points[1]);
  EXPECT_EQ(j["id"], "s1");
  EXPECT_EQ(j["axes"], nlohmann::json({"preset", "batch_size"}));
  EXPECT_EQ(j["values"]["batch_size"], nlohmann::json({2, 4})) << "integer axes are numbers";
  EXPECT_EQ(j["point"], nlohmann::json({{"preset", "tiny"}, {"batch_size", 4}}));
  EXPECT_EQ(j["index"], 1);
  EXPECT_EQ(j["count"], 4);
}

}  // namespace
}  // namespace stepwise::ablations
