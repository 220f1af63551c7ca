// Reading --sweep and laying out its points: the axes' values checked before anything runs, the product in order,
// and the label each point's results carry.
#include "ablations/run/sweep.h"

#include "model/config.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace stepwise::ablations {

namespace {

struct AxisKind {
  const char* name;
  const char* option;
  bool integer;
};
constexpr AxisKind kAxes[] = {
    {"preset", "--preset", false}, {"seq_len", "--seq-len", true}, {"batch_size", "--batch-size", true}};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void check_value(const AxisKind& axis, const std::string& value) {
  if (!axis.integer) {
    model::preset(value);  // throws, naming the valid presets
    return;
  }
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || n <= 0)
    throw std::invalid_argument(std::string("--sweep ") + axis.name + ": '" + value + "' is not a positive integer");
}

}  // namespace

std::vector<std::string> sweep_axis_names() {
  std::vector<std::string> names;
  for (const auto& a : kAxes) names.emplace_back(a.name);
  return names;
}

std::vector<SweepAxis> parse_sweep(const std::vector<std::string>& specs) {
  std::vector<SweepAxis> axes;
  for (const auto& spec : specs) {
    const auto equals = spec.find('=');
    if (equals == std::string::npos)
      throw std::invalid_argument("--sweep '" + spec + "': give AXIS=v1,v2,... (axes: " + joined(sweep_axis_names()) +
                                  ")");
    std::string name = spec.substr(0, equals);
    std::replace(name.begin(), name.end(), '-', '_');
    const auto* kind = std::find_if(std::begin(kAxes), std::end(kAxes), [&](const auto& a) { return name == a.name; });
    if (kind == std::end(kAxes))
      throw std::invalid_argument("--sweep: unknown axis '" + spec.substr(0, equals) +
                                  "' (valid: " + joined(sweep_axis_names()) + ")");
    if (std::any_of(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.name == name; }))
      throw std::invalid_argument("--sweep: axis '" + name + "' is given twice");
    SweepAxis axis{name, kind->option, {}};
    std::set<std::string> seen;
    std::stringstream in(spec.substr(equals + 1));
    for (std::string value; std::getline(in, value, ',');) {
      if (value.empty()) throw std::invalid_argument("--sweep '" + spec + "': an empty value (a stray comma?)");
      check_value(*kind, value);
      if (!seen.insert(value).second) throw std::invalid_argument("--sweep '" + spec + "': '" + value + "' twice");
      axis.values.push_back(value);
    }
    if (axis.values.empty()) throw std::invalid_argument("--sweep '" + spec + "': no values");
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::string SweepPoint::slug() const {
  std::string out;
  for (const auto& [axis, value] : values) {
    std::string name = axis->name;
    std::replace(name.begin(), name.end(), '_', '-');
    out += (out.empty() ? "" : "_") + name + "-" + value;
  }
  return out;
}

std::string SweepPoint::label() const {
  std::string out;
  for (const auto& [axis, value] : values) out += (out.empty() ? "" : ", ") + axis->name + "=" + value;
  return out;
}

std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes) {
  std::vector<SweepPoint> points{SweepPoint{}};
  for (const auto& axis : axes) {
    std::vector<SweepPoint> next;
    for (const auto& p : points)
      for (const auto& v : axis.values) {
        SweepPoint q = p;
        q.values.emplace_back(&axis, v);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  for (size_t i = 0; i < points.size(); ++i) points[i].index = i;
  return axes.empty() ? std::vector<SweepPoint>{} : points;
}

nlohmann::json sweep_json(const std::string& sweep_id, const std::vector<SweepAxis>& axes, const SweepPoint& point) {
  // Integer axes are numbers in the JSON, so a report can order and plot them as such.
  const auto typed = [](const SweepAxis& axis, const std::string& v) {
    return axis.name == "preset" ? nlohmann::json(v) : nlohmann::json(std::stoll(v));
  };
  nlohmann::json j{{"id", sweep_id}, {"index", point.index}};
  j["axes"] = nlohmann::json::array();
  j["values"] = nlohmann::json::object();
  for (const auto& axis : axes) {
    j["axes"].push_back(axis.name);
    auto& values = j["values"][axis.name] = nlohmann::json::array();
    for (const auto& v : axis.values) values.push_back(typed(axis, v));
  }
  j["count"] = sweep_points(axes).size();
  j["point"] = nlohmann::json::object();
  for (const auto& [axis, value] : point.values) j["point"][axis->name] = typed(*axis, value);
  return j;
}

}  // namespace stepwise::ablations
