// Plain-text tables for the terminal: aligned columns, a header rule, nothing else.
#pragma once

#include <string>
#include <vector>

namespace stepwise::ablations {

class TextTable {
 public:
  enum class Align { Left, Right };
  struct Column {
    std::string header;
    Align align = Align::Left;
  };
  explicit TextTable(std::vector<Column> columns);
  void add_row(std::vector<std::string> cells);
  // A row whose single text spans every column after the first `lead` cells (e.g. "skipped: requires CUDA").
  void add_note_row(std::vector<std::string> lead, std::string note);
  std::string str() const;

 private:
  struct Row {
    std::vector<std::string> cells;
    std::string note;
  };
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

// Number formatting shared by every table: thousands separators, fixed decimals, byte sizes, percentages.
std::string with_commas(double value);
std::string fixed(double value, int decimals);
std::string gib(double bytes);
std::string percent(double fraction, int decimals = 1);
// The strings with `separator` between them.
std::string joined(const std::vector<std::string>& parts, const std::string& separator);

}  // namespace stepwise::ablations
