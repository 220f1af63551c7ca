// FlagOption's command-line name and the number checks the command line's own options share.
#include "ablations/flag_option.h"

#include <algorithm>

namespace stepwise::ablations {

namespace {

std::invalid_argument not_a(std::string_view what, const std::string& value) {
  return std::invalid_argument("must be " + std::string(what) + " (got '" + value + "')");
}

}  // namespace

std::string FlagOption::cli_name() const {
  std::string dashed = name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  return "--" + dashed;
}

int64_t parse_integer_at_least(const std::string& value, int64_t minimum, std::string_view what) {
  try {
    size_t used = 0;
    const long long v = std::stoll(value, &used);
    if (used == value.size() && v >= minimum) return v;
  } catch (const std::exception&) {
  }
  throw not_a(what, value);
}

double parse_number_in(const std::string& value, double minimum, bool inclusive, double below, std::string_view what) {
  try {
    size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size() && (inclusive ? v >= minimum : v > minimum) && v < below) return v;
  } catch (const std::exception&) {
  }
  throw not_a(what, value);
}

}  // namespace stepwise::ablations
