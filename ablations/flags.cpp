// The flag table in Raschka's order, and reading flag lists from the command line and suite files.
#include "ablations/flags.h"

#include "bench/device.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace stepwise::ablations {

namespace {

std::string valid_names() {
  std::string out;
  for (const auto* f : flag_table()) out += (out.empty() ? "" : ", ") + std::string(f->name);
  return out;
}

}  // namespace

std::string to_string(Applies a) { return a == Applies::Both ? "cpu+cuda" : "cuda"; }

const std::vector<const Flag*>& flag_table() {
  static const std::vector<const Flag*> table{
      &flags::dynamic_mask,  &flags::tf32,       &flags::fused_adamw,    &flags::pinned_memory, &flags::bf16,
      &flags::native_layers, &flags::flash,      &flags::compile,        &flags::vocab_padding, &flags::max_batch,
      &flags::checkpoint,    &flags::chunked_ce, &flags::host_allocator, &flags::fp8,           &flags::zero1};
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
  if (list == "all") return flag_names();
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
