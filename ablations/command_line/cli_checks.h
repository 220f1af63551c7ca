// The checks ./ablate's options share: CLI11 validators whose message names the rule ("a positive integer"), not
// CLI11's "Value 0 not in range 0.000000 to 1.797...e308". They are the flags' options' own parsers
// (ablations/flag_table/flag_option.h), so an option and a flag option that take the same kind of value refuse a bad
// one with the same words.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

namespace stepwise::ablations {

// An integer >= minimum; `what` names it in the message ("a positive integer").
CLI::Validator integer_at_least(int64_t minimum, const char* what);

// A number in [minimum, below) (or (minimum, below) unless `inclusive`); `what` names it in the message.
CLI::Validator number_in(double minimum, bool inclusive, double below, const char* what);

extern const CLI::Validator kPositiveInteger;     // 1, 2, ...
extern const CLI::Validator kNonNegativeInteger;  // 0, 1, ...
extern const CLI::Validator kPositiveNumber;      // > 0

}  // namespace stepwise::ablations
