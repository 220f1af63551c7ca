// Terminal tables and number formatting.
#include "ablations/tables/text_table.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

TEST(TextTable, AlignsColumnsUnderAHeaderRule) {
  TextTable t({{"step"}, {"tok/s", TextTable::Align::Right}});
  t.add_row({"baseline", "12,525"});
  t.add_row({"bf16", "45,486"});
  t.add_note_row({"tf32"}, "skipped: requires a CUDA device");
  EXPECT_EQ(t.str(),
            "step       tok/s\n"
            "----------------\n"
            "baseline  12,525\n"
            "bf16      45,486\n"
            "tf32      skipped: requires a CUDA device\n");
}

TEST(Format, Numbers) {
  EXPECT_EQ(with_commas(142156.4), "142,156");
  EXPECT_EQ(with_commas(999), "999");
  EXPECT_EQ(with_commas(-1234567), "-1,234,567");
  EXPECT_EQ(fixed(1.005, 1), "1.0");
  EXPECT_EQ(gib(26.2617 * 1024 * 1024 * 1024), "26.26 GiB");
  EXPECT_EQ(percent(0.3123), "31.2%");
}

}  // namespace
}  // namespace stepwise::ablations
