// FlagOption's command-line name and the number checks the command line's own options share.
#include "ablations/flag_table/flag_option.h"

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

nlohmann::json FlagOption::describe() const {
  nlohmann::json j{{"name", name},
                   {"cli", cli_name()},
                   {"help", help},
                   {"default", default_help},
                   {"in_suites", in_suites},
                   {"acts_while_off", acts_while_off},
                   {"in_results", static_cast<bool>(result_value)}};
  if (is_switch) {
    j["type"] = "boolean";
  } else if (!choices.empty()) {
    j["type"] = "string";
    j["enum"] = choices;
  } else {
    j["type"] = type_name == "INT" ? "integer" : "number";
    if (!values.empty()) j["values"] = values;
  }
  if (minimum) j[exclusive_minimum ? "exclusiveMinimum" : "minimum"] = *minimum;
  if (below) j["exclusiveMaximum"] = *below;
  return j;
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
