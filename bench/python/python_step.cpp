// run_python_configuration: the request directory bench/python/README.md documents, the Python process, and its
// result read back into the engine's RunResult.
#include "bench/python/python_step.h"

#include "bench/child_process.h"
#include "bench/data/sampler.h"
#include "bench/interrupted.h"
#include "bench/measure/gpu_state.h"
#include "bench/memory.h"
#include "bench/phases.h"
#include "bench/python/python_server.h"
#include "bench/source_dir.h"
#include "bench/step/train_state.h"
#include "bench/trace/op_counts.h"
#include "model/softcap_kernel.h"

#include <ATen/ATen.h>
#include <ATen/Version.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>

namespace stepwise::bench {

namespace {

// reduce-overhead's CUDA graph trees warm up, record, then replay: the Python side never warms up fewer steps.
constexpr int64_t kPythonMinWarmup = 3;

// request.json: the configuration as the result records it, and what the engine resolves from it as it runs (each
// step's dropout seed, the dtype Newton-Schulz runs in on this device), the steps counted by the profiler after the
// measured ones (--count-ops; a throughput row's only) and how many rows of batches the request holds.
nlohmann::json request_json(const RunConfig& c, const DescribeConfig& describe, const std::string& implementation,
                            int64_t rows, bool target) {
  return {{"implementation", implementation},
          {"config", describe(c)},
          {"dropout_seed", dropout_seed(c.seed)},
          {"ns_dtype", c.muon ? nlohmann::json(to_string(resolved_ns_dtype(c.muon_options.ns_dtype(), c.device)))
                              : nlohmann::json()},
          {"count_steps", target ? 0 : c.count_steps},
          {"batches_rows", rows}};
}

void write_binary(const std::filesystem::path& path, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// The batches the C++ loader would stage, row k for step k (warm-up first): the same sampler, seed and order.
std::vector<int64_t> batch_starts(const RunConfig& c, size_t n_tokens, int64_t rows) {
  BatchSampler sampler(n_tokens, c.seq_len, c.batch_size, c.seed);
  std::vector<int64_t> starts;
  starts.reserve(static_cast<size_t>(rows * c.batch_size));
  for (int64_t r = 0; r < rows; ++r)
    for (size_t s : sampler.next_batch()) starts.push_back(static_cast<int64_t>(s));
  return starts;
}

// Where torch.compile rows keep Inductor's on-disk cache: one per ATen CPU capability, unless the user chose one
// (TORCHINDUCTOR_CACHE_DIR). Inductor's cache is not keyed on ATEN_CPU_CAPABILITY: a kernel cached under one level
// and loaded under another dies of SIGBUS or an abort in torch 2.11, so a run under the AVX2 cap would crash on what
// an uncapped run left (and the other way round).
std::optional<std::string> inductor_cache_dir() {
  if (const char* set = std::getenv("TORCHINDUCTOR_CACHE_DIR"); set && *set) return std::nullopt;
  const char* user = std::getenv("USER");
  return (std::filesystem::temp_directory_path() /
          ("torchinductor_" + (user && *user ? std::string(user) : std::to_string(getuid())) + "_" +
           at::get_cpu_capability()))
      .string();
}

std::string log_tail(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  std::vector<std::string> lines;
  while (std::getline(in, line))
    if (!line.empty()) lines.push_back(line);
  for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i)
    last += (last.empty() ? "" : " | ") + lines[i];
  return last.substr(last.size() > 400 ? last.size() - 400 : 0);
}

std::vector<StepRecord> steps_from(const nlohmann::json& j) {
  std::vector<StepRecord> out;
  for (const auto& s : j)
    out.push_back({s.at("ms").get<double>(), s.at("loss").is_null() ? NAN : s.at("loss").get<double>()});
  return out;
}

// Each step's phases as the Python step marked them ({"forward": ms, ...}, bench/python/train_step.py); a step
// without them (a target run's) marks none.
std::vector<PhaseTimes> phases_from(const nlohmann::json& j) {
  std::vector<PhaseTimes> out;
  for (const auto& s : j) {
    PhaseTimes t = no_phase_times();
    if (const auto it = s.find("phases"); it != s.end() && it->is_object())
      for (const auto& [name, ms] : it->items())
        if (ms.is_number()) t[static_cast<size_t>(kPhaseNames.from_string(name))] = ms.get<double>();
    out.push_back(t);
  }
  return out;
}

// --count-ops: the raw counts step.py wrote (bench/python/op_counts.py), summarised as the engine's row's are.
nlohmann::json op_counts_of(const nlohmann::json& j, bool cuda) {
  const auto it = j.find("op_counts");
  if (it == j.end() || !it->is_object()) return op_counts_unavailable_json("the Python row wrote none");
  if (it->value("status", "") != "ok")
    return op_counts_unavailable_json(it->value("reason", std::string("the Python row could not count")));
  try {
    return op_counts_json(step_work_from_json(it->value("steps", nlohmann::json())), cuda);
  } catch (const std::invalid_argument& e) {
    return op_counts_unavailable_json(e.what());
  }
}

template <typename T>
std::optional<T> optional_at(const nlohmann::json& j, const char* key) {
  return j.contains(key) && !j[key].is_null() ? std::optional<T>(j[key].get<T>()) : std::nullopt;
}

}  // namespace

const std::vector<std::string>& implementation_names() {
  static const std::vector<std::string> names{"libtorch", "python-eager", "python-compile",
                                              "python-compile-max-autotune", "python-compile-reduce-overhead"};
  return names;
}

void check_implementation(const std::string& name) {
  for (const auto& n : implementation_names())
    if (n == name) return;
  std::string valid;
  for (const auto& n : implementation_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown implementation '" + name + "' (valid: " + valid + ")");
}

void write_safetensors(const std::filesystem::path& path,
                       const std::vector<std::pair<std::string, at::Tensor>>& named) {
  nlohmann::json header = nlohmann::json::object();
  std::vector<at::Tensor> data;
  int64_t offset = 0;
  for (const auto& [name, tensor] : named) {
    auto t = tensor.detach().to(at::kCPU).contiguous();
    if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kBFloat16)
      throw std::invalid_argument("write_safetensors: " + name + " is neither float32 nor bfloat16");
    const int64_t bytes = t.numel() * static_cast<int64_t>(t.element_size());
    header[name] = {{"dtype", t.scalar_type() == at::kFloat ? "F32" : "BF16"},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(t);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the format pads the header with spaces to 8 bytes
  const uint64_t length = text.size();          // little-endian on every machine stepwise builds for
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&length), sizeof(length));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& t : data)
    out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::optional<std::string> python_cannot_run(const RunConfig& config) {
  const auto& m = config.model;
  const char* missing = m.checkpoint() ? "checkpoint" : m.chunked_ce() ? "chunked_ce" : m.fp8() ? "fp8" : nullptr;
  if (!missing) return std::nullopt;
  return std::string("the Python model (bench/python/model.py) has no twin of ") + missing +
         ": only the engine's row measures it";
}

std::filesystem::path python_scratch_root() {
  if (const char* dir = std::getenv("STEPWISE_SCRATCH_DIR"); dir && *dir) return dir;
  return std::filesystem::temp_directory_path();
}

namespace {

// Removes the request directory however the row ends.
struct ScratchDirectory {
  std::filesystem::path path;
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// Writes the request directory, runs step.py in it and parses its result.json. With `target` the request trains to it
// (val_tokens.bin beside the training stream) and `on_progress` is given the curve step.py reports as it goes.
// Throws Interrupted, or std::runtime_error with the reason.
nlohmann::json run_request(const RunConfig& config, const DescribeConfig& describe,
                           const std::shared_ptr<const Tokens>& tokens, const std::string& implementation,
                           const TargetOptions* target, const Tokens* val, const std::atomic<bool>* interrupted,
                           const std::function<void(const nlohmann::json&)>& on_progress) {
  static std::atomic<int> row_counter{0};
  const ScratchDirectory workdir{python_scratch_root() / ("stepwise-python-" + std::to_string(getpid()) + "-" +
                                                          std::to_string(row_counter++) + "-" + implementation)};
  const auto& dir = workdir.path;
  std::filesystem::create_directories(dir);
  const int64_t warmup = std::max(target ? target->warmup_steps : config.timing.warmup, kPythonMinWarmup);
  // Training to a target undoes the warm-up and starts the data order again: the rows serve both. A throughput row's
  // counted steps (--count-ops) come after its measured ones.
  const int64_t rows = target ? std::max(warmup, target->max_steps)
                              : warmup + static_cast<int64_t>(config.timing.stop.max_steps + config.count_steps);
  {
    auto model = initial_model(config);  // the exact weights the C++ row starts from, in its layout
    std::vector<std::pair<std::string, at::Tensor>> named;
    for (const auto& item : model->named_parameters()) named.emplace_back(item.key(), item.value());
    write_safetensors(dir / "weights.safetensors", named);
  }
  write_binary(dir / "tokens.bin", tokens->data(), tokens->size() * sizeof(uint16_t));
  if (val) write_binary(dir / "val_tokens.bin", val->data(), val->size() * sizeof(uint16_t));
  const auto starts = batch_starts(config, tokens->size(), rows);
  write_binary(dir / "batches.bin", starts.data(), starts.size() * sizeof(int64_t));
  std::ofstream(dir / "request.json") << request_json(config, describe, implementation, rows, target != nullptr).dump(1)
                                      << "\n";

  const auto log = dir / "step.log";
  const auto script = source_dir() / "bench" / "python" / "step.py";
  std::optional<std::filesystem::file_time_type> seen;
  const auto poll = [&] {  // progress.json is replaced atomically after each evaluation
    std::error_code error;
    const auto changed = std::filesystem::last_write_time(dir / "progress.json", error);
    if (error || changed == seen) return;
    seen = changed;
    std::ifstream in(dir / "progress.json");
    const auto curve = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (curve.is_array()) on_progress(curve);
  };
  // The process's host allocator reaches the Python rows through the environment they inherit
  // (bench/host_allocator.h); torch.compile's cache is kept apart per CPU capability; the engine's own kernels
  // (model/softcap_kernel.h) are the library the Python model loads.
  EnvironmentChanges env{{"STEPWISE_KERNELS", model::kernels_library_path()}};
  if (const auto cache = inductor_cache_dir()) env.emplace_back("TORCHINDUCTOR_CACHE_DIR", *cache);
  const auto polling = on_progress ? std::function<void()>(poll) : nullptr;
  // On a CPU a warm server forks the row (bench/python/python_server.h); on a GPU, or when it cannot, the row starts
  // an interpreter of its own.
  std::optional<int> code;
  if (config.device.is_cpu()) code = run_in_python_server(python_interpreter(), script, dir, env, interrupted, polling);
  if (!code)
    code = run_child_process({python_interpreter(), script.string(), dir.string()}, env, log, interrupted, polling);
  if (interrupted && interrupted->load()) throw Interrupted("interrupted: the Python process was stopped");
  std::ifstream in(dir / "result.json");
  if (*code != 0 || !in)
    throw std::runtime_error("the Python step exited with status " + std::to_string(*code) + ": " + log_tail(log));
  return nlohmann::json::parse(in);
}

std::vector<EvalPoint> curve_from(const nlohmann::json& j) {
  std::vector<EvalPoint> curve;
  for (const auto& p : j)
    curve.push_back({p.at("step").get<int64_t>(), p.at("tokens").get<int64_t>(), p.at("time_s").get<double>(),
                     p.at("val_loss").is_null() ? NAN : p.at("val_loss").get<double>(),
                     optional_at<double>(p, "train_loss")});
  return curve;
}

}  // namespace

RunResult run_python_configuration(const RunConfig& config, const DescribeConfig& describe,
                                   const std::shared_ptr<const Tokens>& tokens, const std::string& implementation,
                                   const std::atomic<bool>* interrupted) {
  RunResult r;
  r.implementation = implementation;
  r.batch_size = config.batch_size;
  // The Python process measures its own phases; the GPU's state is read around the whole row.
  GpuState gpu(config.device);
  gpu.mark("python_row", true);
  try {
    const auto j = run_request(config, describe, tokens, implementation, nullptr, nullptr, interrupted, nullptr);
    r.status = j.value("status", "failed");
    if (!j["reason"].is_null()) r.reason = j["reason"].get<std::string>();
    r.clock = j.value("clock", "");
    r.optimizer = j.value("optimizer", "");
    r.warmup = steps_from(j["warmup"]);
    r.steps = steps_from(j["steps"]);
    r.phases = phases_from(j["steps"]);
    r.stop_reason = j.value("stop_reason", r.status == "ok" ? "noise" : "failed");
    r.compile_s = optional_at<double>(j, "compile_s");
    r.python_versions = j.value("versions", nlohmann::json());
    if (j.contains("sdpa_backend_used") && !j["sdpa_backend_used"].is_null())
      r.sdpa_backend_used = j["sdpa_backend_used"].get<std::string>();
    if (config.count_steps > 0 && r.status == "ok") r.op_counts = op_counts_of(j, config.device.is_cuda());
    if (const auto& m = j["memory"]; m.is_object()) {
      MemoryStats stats;
      stats.kind = m.value("kind", "");
      stats.scope = m.value("scope", "");
      stats.peak_allocated_bytes = optional_at<int64_t>(m, "peak_allocated_bytes");
      stats.peak_reserved_bytes = optional_at<int64_t>(m, "peak_reserved_bytes");
      stats.current_allocated_bytes = optional_at<int64_t>(m, "current_allocated_bytes");
      stats.current_reserved_bytes = optional_at<int64_t>(m, "current_reserved_bytes");
      stats.peak_rss_bytes = optional_at<int64_t>(m, "peak_rss_bytes");
      r.memory = stats;
    }
  } catch (const Interrupted&) {
    r.status = "failed";
    r.stop_reason = "interrupted";
    r.reason = "interrupted: the Python process was stopped";
  } catch (const std::exception& e) {
    r.status = "failed";
    r.stop_reason = "failed";
    r.reason = std::string("python: ") + e.what();
  }
  gpu.mark("python_row", false);
  r.gpu_state = gpu.to_json();
  fill_statistics(config, r);
  return r;
}

PythonSeed train_python_to_target(const RunConfig& config, const DescribeConfig& describe,
                                  const std::shared_ptr<const Tokens>& train, const std::shared_ptr<const Tokens>& val,
                                  const TargetOptions& target, const std::string& implementation,
                                  const ConvergenceProgress& on_progress, const std::atomic<bool>* interrupted) {
  PythonSeed out;
  SeedRun& run = out.run;
  run.seed = config.seed;
  try {
    if (!val) throw std::runtime_error("time to a target loss needs a validation stream");
    const auto j = run_request(config, describe, train, implementation, &target, val.get(), interrupted,
                               [&](const nlohmann::json& curve) {
                                 if (!on_progress) return;
                                 SeedRun so_far;
                                 so_far.curve = curve_from(curve);
                                 on_progress(so_far);
                               });
    run.status = j.value("status", "failed");
    if (!j["reason"].is_null()) run.reason = j["reason"].get<std::string>();
    run.stop_reason = j["stop_reason"].is_null() ? "failed" : j["stop_reason"].get<std::string>();
    for (const auto& s : steps_from(j["steps"])) {
      run.step_ms.push_back(s.ms);
      run.step_losses.push_back(s.loss);
    }
    out.optimizer = j.value("optimizer", "");
    out.compile_s = optional_at<double>(j, "compile_s");
    out.python_versions = j.value("versions", nlohmann::json());
    if (const auto& c = j["convergence"]; c.is_object()) {
      run.reached = c.value("reached", false);
      run.steps = optional_at<int64_t>(c, "steps");
      run.tokens = optional_at<int64_t>(c, "tokens");
      run.time_s = optional_at<double>(c, "time_s");
      run.warmup_s = c.value("warmup_s", 0.0);
      run.eval_s = c.value("eval_s", 0.0);
      run.curve = curve_from(c["curve"]);
    }
  } catch (const Interrupted&) {
    run.status = "failed";
    run.stop_reason = "interrupted";
    run.reason = "interrupted: the Python process was stopped";
  } catch (const std::exception& e) {
    run.status = "failed";
    run.stop_reason = "failed";
    run.reason = std::string("python: ") + e.what();
  }
  return out;
}

}  // namespace stepwise::bench
