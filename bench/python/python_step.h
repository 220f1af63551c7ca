// The same configuration in PyTorch Python (bench/python/step.py), for the same-machine rows beside every C++ row:
// this writes the request (the configuration, its exact initial weights, the token stream and every step's batch),
// runs the Python step, and reads its raw measurements back into a RunResult, so the statistics, MFU, loss check
// and result document are computed by the same code as the C++ row's.
#pragma once

#include "bench/measure/convergence.h"
#include "bench/measure/runner.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stepwise::bench {

// The implementations a row can be measured with: stepwise's own engine, and PyTorch Python eager or compiled.
const std::vector<std::string>& implementation_names();  // "libtorch", "python-eager", "python-compile", ...
// Throws std::invalid_argument naming the valid ones.
void check_implementation(const std::string& name);

// Writes the tensors of `named` (float32 or bfloat16) as a safetensors file: an 8-byte little-endian header length,
// the JSON header, then the raw bytes. The Python side reads it with the safetensors package.
void write_safetensors(const std::filesystem::path& path, const std::vector<std::pair<std::string, at::Tensor>>& named);

// The configuration as a Python row's request carries it (the `config` of request.json, bench/python/README.md):
// the result's config section for the RunConfig the row runs (ablations/run/result_document.h: config_json), given by
// the caller, since the flags' declarations that write it sit above bench/.
using DescribeConfig = std::function<nlohmann::json(const RunConfig&)>;

// Runs `config` as `implementation` (a python-* name) in python_interpreter(), with a scratch directory for the
// request (the weights alone are hundreds of MB at GPT-2 sizes) under python_scratch_root(), never beside the results,
// removed afterwards. Never throws for the run's own failures: they come back as a failed RunResult with the reason.
// When `interrupted` becomes true the Python process is stopped (SIGTERM, then SIGKILL) and the row is recorded as
// interrupted.
RunResult run_python_configuration(const RunConfig& config, const DescribeConfig& describe,
                                   const std::shared_ptr<const Tokens>& tokens, const std::string& implementation,
                                   const std::atomic<bool>* interrupted = nullptr);

// One seed of `config` trained to `target` in Python (step.py's train_to_target, the mirror of
// bench/measure/convergence.cpp's): the same initial weights, batches, validation windows, learning-rate schedule and
// dropout seed as the engine's seed. Never throws for the run's own failures; `on_progress` sees the curve so far.
struct PythonSeed {
  SeedRun run;
  std::string optimizer;            // the torch.optim implementation that ran
  std::optional<double> compile_s;  // a compiled implementation's first warm-up step
  nlohmann::json python_versions;   // Python, torch, triton
};
PythonSeed train_python_to_target(const RunConfig& config, const DescribeConfig& describe,
                                  const std::shared_ptr<const Tokens>& train, const std::shared_ptr<const Tokens>& val,
                                  const TargetOptions& target, const std::string& implementation,
                                  const ConvergenceProgress& on_progress = nullptr,
                                  const std::atomic<bool>* interrupted = nullptr);

// Why bench/python cannot run `config` as the engine would (a flag its model has no twin of), so that its row is a
// planned skip with that reason rather than the plain model under the flag's name; nullopt when it can.
std::optional<std::string> python_cannot_run(const RunConfig& config);

// Where Python rows' scratch directories go: STEPWISE_SCRATCH_DIR, else the system's temporary directory (TMPDIR).
std::filesystem::path python_scratch_root();

}  // namespace stepwise::bench
