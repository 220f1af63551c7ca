// Sweeps (nvbench's axes): --sweep AXIS=v1,v2,... runs the same suite or configuration at every point of one axis, or
// of several axes' product, so a flag's speedup can be read against model size, sequence length or batch. Each
// point is a run of its own (its own run id and folder, every result labelled with the point), so every table of
// ./report reads it as any run, and ./report's sweep section lines the points up
// (reports/stepwise_report/render/sweep.py).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace stepwise::ablations {

struct SweepAxis {
  std::string name;    // as results name it: preset, seq_len, batch_size
  std::string option;  // the command-line option a point sets: --preset, --seq-len, --batch-size
  std::vector<std::string> values;
};

// The axes a sweep may vary, by their result names.
std::vector<std::string> sweep_axis_names();

// "preset=tiny,mini" or "seq-len=64,128" (dashes or underscores); throws std::invalid_argument naming the problem
// and the valid choices (an unknown axis or preset, a value that is not a positive integer, an axis named twice, a
// repeated or empty value).
std::vector<SweepAxis> parse_sweep(const std::vector<std::string>& specs);

struct SweepPoint {
  size_t index = 0;
  std::vector<std::pair<const SweepAxis*, std::string>> values;  // one per axis, in the axes' order
  std::string slug() const;                                      // "preset-mini_seq-len-128": its folder and run id
  std::string label() const;                                     // "preset=mini, seq_len=128"
};

// The axes' cartesian product, the first axis outermost.
std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes);

// What every result of the point records under "sweep" (results/README.md): the sweep's id, its axes and their
// values, the point's values, its index and the count of points.
nlohmann::json sweep_json(const std::string& sweep_id, const std::vector<SweepAxis>& axes, const SweepPoint& point);

}  // namespace stepwise::ablations
