// The validators of ablations/command_line/cli_checks.h, each the flag options' own parser turned into a CLI11 check.
#include "ablations/command_line/cli_checks.h"

#include "ablations/flag_table/flag_option.h"

#include <stdexcept>
#include <string>

namespace stepwise::ablations {

CLI::Validator integer_at_least(int64_t minimum, const char* what) {
  return CLI::Validator(
      [minimum, what](std::string& value) -> std::string {
        try {
          parse_integer_at_least(value, minimum, what);
          return "";
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      what);
}

CLI::Validator number_in(double minimum, bool inclusive, double below, const char* what) {
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        try {
          parse_number_in(value, minimum, inclusive, below, what);
          return "";
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      what);
}

const CLI::Validator kPositiveInteger = integer_at_least(1, "a positive integer");
const CLI::Validator kNonNegativeInteger = integer_at_least(0, "zero or a positive integer");
const CLI::Validator kPositiveNumber = number_in(0, false, 1e300, "a positive number");

}  // namespace stepwise::ablations
