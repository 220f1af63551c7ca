// The --count-ops pass: each step alone under the Kineto profiler, its events sorted into ATen operators, allocations,
// device activities and CUDA API calls, and the steps summarised for the result (op_counts_json, which the Python row's
// raw counts go through as well).
#include "bench/trace/op_counts.h"

#include "bench/device.h"
#include "bench/oom.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <atomic>
#include <cctype>
#include <set>
#include <stdexcept>

namespace stepwise::bench {

namespace {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

// The name the profiler gives an allocator's report (nBytes > 0: an allocation, < 0: a free).
constexpr const char* kMemoryEvent = "[memory]";

std::atomic<int64_t> preparations{0};  // prepare_profiler's calls in this process

// What both rows ask the profiler for (bench/python/op_counts.py builds the same): Kineto, memory events on; no input
// shapes, stacks, FLOPs or modules, which would only slow the counted steps.
ProfilerConfig profiler_config() {
  return ProfilerConfig(ProfilerState::KINETO, /*report_input_shapes=*/false, /*profile_memory=*/true,
                        /*with_stack=*/false, /*with_flops=*/false, /*with_modules=*/false);
}

std::string device_key(c10::DeviceType type) { return c10::DeviceTypeName(type, /*lower_case=*/true); }

StepWork count_events(const std::vector<profiler::KinetoEvent>& events) {
  StepWork work;
  for (const auto& e : events) {
    const std::string name = e.name();
    if (name == kMemoryEvent) {
      if (e.nBytes() <= 0) continue;  // a free
      auto& a = work.allocations[device_key(e.deviceType())];
      ++a.count;
      a.bytes += e.nBytes();
    } else if (name.starts_with("aten::")) {
      ++work.aten_ops[name];
    } else if (e.deviceType() == c10::DeviceType::CUDA) {
      ++work.device_activities[name];  // a kernel, memcpy or memset
    } else if (is_cuda_api_call(name)) {
      ++work.runtime_calls[name];  // the host's side: the call that launched a kernel, a graph or a copy
    }
  }
  return work;
}

int64_t total(const std::map<std::string, int64_t>& counts) {
  int64_t n = 0;
  for (const auto& [name, count] : counts) n += count;
  return n;
}

// Every count of a step under one name: the op's own, "allocations.<device>.count|bytes", "device:<activity>",
// "runtime:<call>".
std::map<std::string, int64_t> flattened(const StepWork& w) {
  std::map<std::string, int64_t> out(w.aten_ops.begin(), w.aten_ops.end());
  for (const auto& [device, a] : w.allocations) {
    out["allocations." + device + ".count"] = a.count;
    out["allocations." + device + ".bytes"] = a.bytes;
  }
  for (const auto& [name, count] : w.device_activities) out["device:" + name] = count;
  for (const auto& [name, count] : w.runtime_calls) out["runtime:" + name] = count;
  return out;
}

// A map of counts as JSON: null where nothing of its kind could be counted (a CPU's device activities).
nlohmann::json counts_or_null(const std::map<std::string, int64_t>& counts, bool counted) {
  if (!counted) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, count] : counts) out[name] = count;
  return out;
}

nlohmann::json total_or_null(const std::map<std::string, int64_t>& counts, bool counted) {
  return counted ? nlohmann::json(total(counts)) : nlohmann::json();
}

}  // namespace

bool is_cuda_api_call(const std::string& name) {
  // The runtime's calls are cudaXxx, the driver's cuXxx; a kernel's name (cutlass::..., void at::...) has neither form.
  const auto capital_after = [&](size_t n) {
    return name.size() > n && std::isupper(static_cast<unsigned char>(name[n]));
  };
  return (name.starts_with("cuda") && capital_after(4)) || (name.starts_with("cu") && capital_after(2));
}

bool is_launch(const std::string& name) { return is_cuda_api_call(name) && name.find("Launch") != std::string::npos; }

int64_t aten_op_total(const StepWork& work) { return total(work.aten_ops); }

int64_t launch_total(const StepWork& work) {
  int64_t n = 0;
  for (const auto& [name, count] : work.runtime_calls)
    if (is_launch(name)) n += count;
  return n;
}

nlohmann::json op_counts_unavailable_json(const std::string& reason) {
  return {{"status", "unavailable"}, {"reason", "op counts unavailable: " + reason}};
}

nlohmann::json op_counts_json(const std::vector<StepWork>& steps, bool device_activities_counted) {
  if (steps.empty()) return op_counts_unavailable_json("no step was counted");
  std::vector<std::map<std::string, int64_t>> flat;
  std::set<std::string> names;
  for (const auto& s : steps) {
    flat.push_back(flattened(s));
    for (const auto& [name, count] : flat.back()) names.insert(name);
  }
  nlohmann::json varying = nlohmann::json::object();  // name -> its value in each counted step, where they differ
  for (const auto& name : names) {
    std::vector<int64_t> values;
    for (const auto& f : flat) values.push_back(f.contains(name) ? f.at(name) : 0);
    if (std::set<int64_t>(values.begin(), values.end()).size() > 1) varying[name] = values;
  }
  const StepWork& last = steps.back();  // the furthest from the warm-up
  // cpu always, cuda on a GPU, even at zero: a reader compares rows without asking which keys each has.
  nlohmann::json allocations = {{"cpu", {{"count", 0}, {"bytes", 0}}}};
  if (device_activities_counted) allocations["cuda"] = {{"count", 0}, {"bytes", 0}};
  for (const auto& [device, a] : last.allocations) allocations[device] = {{"count", a.count}, {"bytes", a.bytes}};
  return {{"status", "ok"},
          {"steps_counted", steps.size()},
          {"same_each_step", varying.empty()},
          {"per_step",
           {{"aten_ops", counts_or_null(last.aten_ops, true)},
            {"aten_op_total", aten_op_total(last)},
            {"allocations", allocations},
            {"device_activities", counts_or_null(last.device_activities, device_activities_counted)},
            {"device_activity_total", total_or_null(last.device_activities, device_activities_counted)},
            {"runtime_calls", counts_or_null(last.runtime_calls, device_activities_counted)},
            {"runtime_call_total", total_or_null(last.runtime_calls, device_activities_counted)},
            {"launch_total", device_activities_counted ? nlohmann::json(launch_total(last)) : nlohmann::json()}}},
          {"varying", varying}};
}

std::vector<StepWork> step_work_from_json(const nlohmann::json& steps) {
  if (!steps.is_array()) throw std::invalid_argument("op counts: 'steps' is not a list");
  std::vector<StepWork> out;
  try {
    for (const auto& s : steps) {
      StepWork w;
      for (const auto& [name, count] : s.at("aten_ops").items()) w.aten_ops[name] = count.get<int64_t>();
      for (const auto& [device, a] : s.at("allocations").items())
        w.allocations[device] = {a.at("count").get<int64_t>(), a.at("bytes").get<int64_t>()};
      if (const auto& d = s.at("device_activities"); !d.is_null())
        for (const auto& [name, count] : d.items()) w.device_activities[name] = count.get<int64_t>();
      if (const auto& r = s.at("runtime_calls"); !r.is_null())
        for (const auto& [name, count] : r.items()) w.runtime_calls[name] = count.get<int64_t>();
      out.push_back(std::move(w));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("op counts: a step's counts are malformed: ") + e.what());
  }
  return out;
}

std::optional<std::string> prepare_profiler(const c10::Device& device) {
  ++preparations;
  std::set<ActivityType> activities{ActivityType::CPU};
  if (device.is_cuda()) activities.insert(ActivityType::CUDA);
  try {
    synchronize(device);
    profiler::prepareProfiler(profiler_config(), activities);
    profiler::enableProfiler(profiler_config(), activities);
    try {
      if (device.is_cuda()) {
        at::ones({1}, at::TensorOptions().device(device)).add_(1);  // a kernel for Kineto to record
        synchronize(device);
      }
    } catch (...) {
      profiler::disableProfiler();
      throw;
    }
    const auto profile = profiler::disableProfiler();
    if (!device.is_cuda()) return std::nullopt;
    for (const auto& e : profile->events())
      if (e.deviceType() == c10::DeviceType::CUDA) return std::nullopt;
    return "Kineto recorded none of the kernels it watched run: CUPTI did not load in this process (another tool "
           "holds it, or the kernel refuses it)";
  } catch (const std::exception& e) {
    return "the profiler could not start: " + short_message(e);
  }
}

int64_t profiler_preparations() { return preparations; }

StepWork count_work(const c10::Device& device, const std::function<void()>& work, bool gpu_side) {
  std::set<ActivityType> activities{ActivityType::CPU};
  if (gpu_side) activities.insert(ActivityType::CUDA);
  profiler::prepareProfiler(profiler_config(), activities);
  profiler::enableProfiler(profiler_config(), activities);
  try {
    work();
    synchronize(device);  // its kernels end inside its own profile
  } catch (...) {
    profiler::disableProfiler();
    throw;
  }
  return count_events(profiler::disableProfiler()->events());
}

nlohmann::json count_step_work(const c10::Device& device, Step& step, size_t steps,
                               const std::optional<std::string>& gpu_side_unavailable) {
  const bool gpu_side = device.is_cuda() && !gpu_side_unavailable;
  std::vector<StepWork> counted;
  try {
    synchronize(device);  // nothing of the measured steps is still running into the first count
    for (size_t i = 0; i < steps; ++i)
      counted.push_back(count_work(
          device, [&] { step(); }, gpu_side));
  } catch (const std::exception& e) {
    // The timed steps are already measured; a count that fails costs only the count.
    return op_counts_unavailable_json("the counted pass failed: " + short_message(e));
  }
  auto out = op_counts_json(counted, gpu_side);
  if (device.is_cuda() && gpu_side_unavailable) out["gpu_side_unavailable"] = *gpu_side_unavailable;
  return out;
}

}  // namespace stepwise::bench
