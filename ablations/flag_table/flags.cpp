// The flag table, as the flag files register it, and reading flag lists from the command line and suite files.
#include "ablations/flag_table/flags.h"

#include "bench/device.h"

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

namespace stepwise::ablations {

namespace {

// Every flag registered so far, in the order the files' static initialisers ran (an order the linker picks).
std::vector<std::unique_ptr<const Flag>>& registered() {
  static std::vector<std::unique_ptr<const Flag>> flags;
  return flags;
}

// The table once built: by position, every name, option name and position once.
std::vector<const Flag*> build_table() {
  std::vector<const Flag*> table;
  for (const auto& f : registered()) table.push_back(f.get());
  std::sort(table.begin(), table.end(), [](const Flag* a, const Flag* b) { return a->position < b->position; });
  std::set<std::string_view> names, options;
  for (size_t i = 0; i < table.size(); ++i) {
    const auto& f = *table[i];
    if (i > 0 && table[i - 1]->position == f.position)
      throw std::logic_error("flags " + std::string(table[i - 1]->name) + " and " + std::string(f.name) +
                             " both declare position " + std::to_string(f.position));
    if (!names.insert(f.name).second) throw std::logic_error("flag " + std::string(f.name) + " is registered twice");
    for (const auto& o : f.options)
      if (!options.insert(o.name).second)
        throw std::logic_error("option " + o.name + " of flag " + std::string(f.name) + " is declared twice");
  }
  return table;
}

bool table_built = false;

std::string valid_names() {
  std::string out;
  for (const auto* f : flag_table()) out += (out.empty() ? "" : ", ") + std::string(f->name);
  return out;
}

}  // namespace

std::string to_string(Applies a) { return kAppliesNames.to_string(a); }

FlagRegistration::FlagRegistration(Flag flag) {
  // A flag registered after the table was read would be missing from what was already generated from it.
  if (table_built) throw std::logic_error("flag " + std::string(flag.name) + " registered after the table was read");
  registered().push_back(std::make_unique<const Flag>(std::move(flag)));
}

const std::vector<const Flag*>& flag_table() {
  static const std::vector<const Flag*> table = build_table();
  table_built = true;
  return table;
}

const Flag* find_flag(std::string_view name) {
  for (const auto* f : flag_table())
    if (f->name == name) return f;
  return nullptr;
}

std::vector<std::string> flag_names() {
  std::vector<std::string> names;
  for (const auto* f : flag_table()) names.emplace_back(f->name);
  return names;
}

std::vector<std::string> all_flag_names() {
  std::vector<std::string> names;
  for (const auto* f : flag_table())
    if (f->math != MathClass::Learning) names.emplace_back(f->name);
  return names;
}

std::optional<OptionOfFlag> find_option(std::string_view name) {
  for (const auto* f : flag_table())
    for (const auto& o : f->options)
      if (o.name == name) return OptionOfFlag{f, &o};
  return std::nullopt;
}

std::vector<std::string> suite_option_names() {
  std::vector<std::string> names;
  for (const auto* f : flag_table())
    for (const auto& o : f->options)
      if (o.in_suites) names.push_back(o.name);
  return names;
}

std::optional<std::string> unmet_precondition(const Flag& flag, const c10::Device& device, int world_size) {
  const auto needs = "requires " + std::string(flag.precondition);
  if (world_size < flag.min_world_size)
    return needs + "; this run has " + std::to_string(world_size) + (world_size == 1 ? " process" : " ranks");
  if (flag.applies != Applies::CudaOnly) return std::nullopt;
  if (!device.is_cuda()) return needs;
  const auto have = bench::compute_capability(device);
  if (have && *have < flag.min_compute_capability)
    return needs + "; this GPU is compute capability " + std::to_string(have->first) + "." +
           std::to_string(have->second);
  return std::nullopt;
}

MathClass math_class(const std::vector<std::string>& flags) {
  MathClass loosest = MathClass::Exact;
  for (const auto& name : flags)
    if (const auto* f = find_flag(name); f && static_cast<int>(f->math) > static_cast<int>(loosest)) loosest = f->math;
  return loosest;
}

std::vector<std::string> in_table_order(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (!find_flag(n)) throw std::invalid_argument("unknown flag '" + n + "' (valid: " + valid_names() + ")");
  std::vector<std::string> ordered;
  for (const auto* f : flag_table())
    if (std::find(names.begin(), names.end(), f->name) != names.end()) ordered.emplace_back(f->name);
  return ordered;
}

std::vector<std::string> parse_flag_list(const std::string& list) {
  if (list == "all") return all_flag_names();
  if (list.empty()) return {};
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty())
      throw std::invalid_argument("empty flag name in '" + list + "' (a stray comma?); valid: " + valid_names() +
                                  ", all");
    if (!find_flag(name))
      throw std::invalid_argument("unknown flag '" + name + "' (valid: " + valid_names() + ", all)");
    if (!seen.insert(name).second) throw std::invalid_argument("flag '" + name + "' is named twice");
    names.push_back(name);
  }
  return in_table_order(names);
}

}  // namespace stepwise::ablations
