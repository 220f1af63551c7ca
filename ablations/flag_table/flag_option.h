// A flag's option: how the flag acts (--bf16-mode=autocast, --ce-chunk-rows=256), declared in the flag's own file
// beside it (ablations/flags/<name>.cpp) with its name, its values, its default, its help, the RunConfig field it sets
// and whether a suite file may set it. The command line's option, the suite file's key, the value each result holds
// and the docs' table are all generated from the declaration (ablations/command_line/cli.cpp, suite.cpp,
// result_document.cpp, flag_docs.cpp): adding an option touches its flag's file and the code it switches, nothing else.
#pragma once

#include "bench/run_config.h"
#include "model/enum_names.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace stepwise::ablations {

// Option name -> its value as the command line or a suite file wrote it, already checked against the option.
using OptionValues = std::map<std::string, std::string>;

struct FlagOption {
  std::string name = {};  // bf16_mode: the suite key and the result's config key; --bf16-mode on the command line
  std::string help = {};  // what it changes, for --help and the docs
  std::vector<std::string> choices = {};  // a choice's valid values, in order; empty for a number or a switch
  std::string values = {};                // a number's values as the docs name them ("rows", "seconds")
  std::string type_name = {};             // what --help shows after the option: INT, FLOAT, {pure,autocast}
  bool is_switch = false;                 // --fp8-head: no value on the command line
  // A number's bounds, written once for the parser and the generated schema: at least `minimum` (above it when
  // `exclusive_minimum`) and below `below`; unset: unbounded on that side.
  std::optional<double> minimum = {}, below = {};
  bool exclusive_minimum = false;
  bool in_suites = false;  // a suite file's "options" may set it, for every device or per device kind
  // It shapes the reference the flag is held against (--adamw-baseline: the AdamW that runs while fused_adamw is off),
  // so it is given without the flag too; every other option without its flag is a usage error
  // (ablations/command_line/resolve.h).
  bool acts_while_off = false;
  // Given when neither the command line nor the suite chose a value (empty: the RunConfig's own value stands), and
  // how --help and the docs state the default.
  std::string default_value = {}, default_help = {};
  // Parses `value` into the RunConfig field the option sets; throws std::invalid_argument naming the valid values.
  std::function<void(bench::RunConfig&, const std::string& value)> set = {};
  // The value every result writes under config.<name> while the flag is in effect (null while it is off), given the
  // batch that was measured; unset: results leave the option out. ("record" is the speedrun's word: its records and
  // the record rule.)
  std::function<nlohmann::json(const bench::RunConfig&, int64_t measured_batch)> result_value = {};

  std::string cli_name() const;  // "--bf16-mode"
  // The declaration as data (--list-flags --json, the generated part of results/schema.json): name, command-line
  // name, help, the JSON Schema type with its enum or bounds, the default as --help states it, whether suite files
  // may set it and whether results hold it (in_results).
  nlohmann::json describe() const;

  // A suite file may set it.
  FlagOption in_suite_files() && {
    in_suites = true;
    return std::move(*this);
  }
  // Results leave it out (what it leads to is written instead: the max_batch probe's bound and cap).
  FlagOption not_in_results() && {
    result_value = nullptr;
    return std::move(*this);
  }
};

// The value checks the command line's own numbers share: "must be a positive integer (got '0')".
int64_t parse_integer_at_least(const std::string& value, int64_t minimum, std::string_view what);
// In (minimum, below), or [minimum, below) when `inclusive`.
double parse_number_in(const std::string& value, double minimum, bool inclusive, double below, std::string_view what);

// `field` is a generic lambda naming the RunConfig field the option sets, for a RunConfig and a const one alike:
// [](auto& c) -> auto& { return c.bf16_mode; } or [](auto& c) -> auto& { return c.model.fp8_scaling(); }.

// One of an enum's names (model/enum_names.h); the default is the RunConfig's own value.
template <typename E, size_t N, typename Field>
FlagOption choice_option(std::string name, const model::EnumNames<E, N>& names, Field field, std::string help) {
  const bench::RunConfig defaults;
  std::string type = "{";
  for (const auto& n : names.names()) type += (type.size() > 1 ? "," : "") + n;
  return {.name = std::move(name),
          .help = std::move(help),
          .choices = names.names(),
          .type_name = type + "}",
          .default_value = names.to_string(field(defaults)),
          .default_help = names.to_string(field(defaults)),
          .set = [names, field](bench::RunConfig& c, const std::string& v) { field(c) = names.from_string(v); },
          .result_value = [names, field](const bench::RunConfig& c,
                                         int64_t) { return nlohmann::json(names.to_string(field(c))); }};
}

// A switch (--fp8-head): on when named, off by default.
template <typename Field>
FlagOption switch_option(std::string name, Field field, std::string help) {
  return {.name = std::move(name),
          .help = std::move(help),
          .values = "(a switch)",
          .is_switch = true,
          .default_help = "off",
          .set =
              [field](bench::RunConfig& c, const std::string& v) {
                if (v != "true" && v != "false") throw std::invalid_argument("must be true or false (got '" + v + "')");
                field(c) = v == "true";
              },
          .result_value = [field](const bench::RunConfig& c, int64_t) { return nlohmann::json(bool(field(c))); }};
}

// A positive integer (an int64_t field) or a positive number (a double field); `values` names what it counts
// ("rows", "seconds"), `default_help` what applies when it is not given.
template <typename Field>
FlagOption positive_option(std::string name, std::string values, Field field, std::string help,
                           std::string default_help) {
  using T = std::remove_cvref_t<decltype(field(std::declval<bench::RunConfig&>()))>;
  constexpr bool integer = std::is_integral_v<T>;
  constexpr int64_t kLeast = 1;  // an integer's least value; a number's bound is 0, excluded
  return {.name = std::move(name),
          .help = std::move(help),
          .values = std::move(values),
          .type_name = integer ? "INT" : "FLOAT",
          .minimum = integer ? kLeast : 0.0,
          .exclusive_minimum = !integer,
          .default_help = std::move(default_help),
          .set =
              [field](bench::RunConfig& c, const std::string& v) {
                if constexpr (integer)
                  field(c) = parse_integer_at_least(v, kLeast, "a positive integer");
                else
                  field(c) = parse_number_in(v, 0, false, 1e300, "a positive number");
              },
          .result_value = [field](const bench::RunConfig& c, int64_t) { return nlohmann::json(field(c)); }};
}

// A number in [0, 1) (a double field): a momentum, a fraction of the run.
template <typename Field>
FlagOption fraction_option(std::string name, Field field, std::string help, std::string default_help) {
  return {.name = std::move(name),
          .help = std::move(help),
          .values = "a fraction in [0, 1)",
          .type_name = "FLOAT",
          .minimum = 0.0,
          .below = 1.0,
          .default_help = std::move(default_help),
          .set = [field](bench::RunConfig& c,
                         const std::string& v) { field(c) = parse_number_in(v, 0, true, 1, "a fraction in [0, 1)"); },
          .result_value = [field](const bench::RunConfig& c, int64_t) { return nlohmann::json(field(c)); }};
}

}  // namespace stepwise::ablations
