// The terminal's tables and number formats: every table ./ablate prints goes through these, so columns and units
// read the same everywhere.
#include "ablations/tables/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stepwise::ablations {

namespace {

// Display width of UTF-8 text: count code points, not bytes (the tables use "×" and "–").
size_t width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, size_t w, TextTable::Align align) {
  const size_t n = width(s);
  if (n >= w) return s;
  return align == TextTable::Align::Left ? s + std::string(w - n, ' ') : std::string(w - n, ' ') + s;
}

}  // namespace

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back({std::move(cells), {}});
}

void TextTable::add_note_row(std::vector<std::string> lead, std::string note) {
  rows_.push_back({std::move(lead), std::move(note)});
}

std::string TextTable::str() const {
  std::vector<size_t> w(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) w[c] = width(columns_[c].header);
  for (const auto& row : rows_)
    if (row.note.empty())
      for (size_t c = 0; c < row.cells.size(); ++c) w[c] = std::max(w[c], width(row.cells[c]));
  std::string out;
  auto line = [&](const std::vector<std::string>& cells, const std::string& note) {
    std::string l;
    for (size_t c = 0; c < cells.size(); ++c) l += (c ? "  " : "") + pad(cells[c], w[c], columns_[c].align);
    if (!note.empty()) l += "  " + note;
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  std::vector<std::string> headers;
  size_t total = 0;
  for (size_t c = 0; c < columns_.size(); ++c) {
    headers.push_back(columns_[c].header);
    total += w[c] + (c ? 2 : 0);
  }
  line(headers, "");
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_) line(row.cells, row.note);
  return out;
}

std::string with_commas(double value) {
  const long long v = std::llround(value);
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

std::string gib(double bytes) { return fixed(bytes / (1024.0 * 1024.0 * 1024.0), 2) + " GiB"; }

std::string percent(double fraction, int decimals) { return fixed(100.0 * fraction, decimals) + "%"; }

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& s : parts) out += (out.empty() ? "" : separator) + s;
  return out;
}

}  // namespace stepwise::ablations
