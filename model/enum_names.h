// One names table per enum, read one way: a value's name, a name's value (or an error naming the valid ones), and
// every name in order. Each option enum of model/, bench/ and ablations/ (--bf16-mode, --sdpa-backend, a suite's kind,
// ...) declares its table once beside the enum, so the CLI's choices, a suite file's values, a result's strings and
// the messages for a bad value all come from it.
#pragma once

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepwise::model {

template <typename E, size_t N>
struct EnumNames {
  std::string_view what;  // how an error names the enum: "unknown <what> 'x' (valid: ...)"
  std::array<std::pair<E, std::string_view>, N> table;

  // "?" for a value the table lacks (an out-of-range cast).
  std::string to_string(E value) const {
    for (const auto& [v, name] : table)
      if (v == value) return std::string(name);
    return "?";
  }

  // Throws std::invalid_argument naming `what`, the value and the valid names.
  E from_string(std::string_view s) const {
    for (const auto& [v, name] : table)
      if (s == name) return v;
    throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(s) + "' (valid: " + joined() + ")");
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [v, name] : table) out.emplace_back(name);
    return out;
  }

  // "pure, autocast"
  std::string joined() const {
    std::string out;
    for (const auto& [v, name] : table) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
  }
};

// enum_names<Bf16Mode>("bf16 mode", {{Bf16Mode::Pure, "pure"}, {Bf16Mode::Autocast, "autocast"}}): the table's size
// from the list.
template <typename E, size_t N>
constexpr EnumNames<E, N> enum_names(std::string_view what, const std::pair<E, std::string_view> (&table)[N]) {
  EnumNames<E, N> names{what, {}};
  for (size_t i = 0; i < N; ++i) names.table[i] = table[i];
  return names;
}

}  // namespace stepwise::model
