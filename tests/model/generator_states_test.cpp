// model/generator_states.h on the CPU: which way a generator's position is kept follows the capture status read from
// the device (a CUDA graph capture takes the graph-offset path, tested on a GPU by
// CudaGraphStep.CheckpointWithDropoutRecomputesTheCapturedMasks), and a fork sets the forward's state for its scope
// and then puts back the state it found, so the recompute redraws the forward's numbers and nothing after it changes.
#include "model/generator_states.h"

#include <ATen/ATen.h>

#include <gtest/gtest.h>

namespace stepwise::model {
namespace {

TEST(GeneratorStates, TheCaptureStatusChoosesHowThePositionIsKept) {
  EXPECT_EQ(rng_keeping(Capture::None), RngKeeping::StateTensor);
  EXPECT_EQ(rng_keeping(Capture::Underway), RngKeeping::GraphOffset);
  EXPECT_EQ(capture_status(c10::Device(c10::kCPU)), Capture::None) << "no CUDA graph captures CPU work";
  const auto kept = GeneratorStates::of(c10::Device(c10::kCPU));
  EXPECT_EQ(kept.keeping, RngKeeping::StateTensor);
  EXPECT_FALSE(kept.device) << "a CPU input has no device generator besides the CPU's";
}

TEST(GeneratorStates, AForkRedrawsTheForwardsNumbersAndLeavesTheGeneratorWhereItWas) {
  at::manual_seed(7);
  const auto forward = GeneratorStates::of(c10::Device(c10::kCPU));
  const at::Tensor drawn_in_forward = at::rand({64});
  const at::Tensor drawn_next = at::rand({64});  // what the backward draws after the forward, without a recompute

  at::manual_seed(7);
  (void)at::rand({64});  // the forward
  at::Tensor redrawn;
  {
    ForkedGenerators fork(forward);
    redrawn = at::rand({64});  // the recompute
  }
  EXPECT_TRUE(at::equal(redrawn, drawn_in_forward)) << "the recompute draws the forward's numbers";
  EXPECT_TRUE(at::equal(at::rand({64}), drawn_next)) << "the generator goes on as if no recompute had drawn";
}

}  // namespace
}  // namespace stepwise::model
