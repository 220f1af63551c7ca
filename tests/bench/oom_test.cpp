// Out-of-memory recognition, which decides whether the max_batch probe records "does not fit" or a failure.
#include "bench/oom.h"

#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <stdexcept>

namespace stepwise::bench {
namespace {

TEST(OutOfMemory, RecognisesEachAllocatorsWording) {
  EXPECT_TRUE(is_out_of_memory(c10::OutOfMemoryError({__func__, __FILE__, __LINE__}, "CUDA out of memory.")));
  EXPECT_TRUE(
      is_out_of_memory(std::runtime_error("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: "
                                          "can't allocate memory: you tried to allocate 211 GB")));
  EXPECT_TRUE(is_out_of_memory(std::runtime_error("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate")));
  EXPECT_FALSE(is_out_of_memory(std::runtime_error("No available kernel.  Aborting execution.")));
  EXPECT_FALSE(is_out_of_memory(std::invalid_argument("shape '[2, 16]' is invalid")));
}

TEST(OutOfMemory, ShortMessageIsTheFirstLine) {
  EXPECT_EQ(short_message(std::runtime_error("first line\nstack trace")), "first line");
  EXPECT_EQ(short_message(std::runtime_error("one line")), "one line");
}

}  // namespace
}  // namespace stepwise::bench
