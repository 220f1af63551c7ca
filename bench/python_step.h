// The same configuration in PyTorch Python (bench/python/step.py), for the same-machine rows beside every C++ row:
// this writes the request (the configuration, its exact initial weights, the token stream and every step's batch),
// runs the Python step, and reads its raw measurements back into a RunResult, so the statistics, MFU, loss check
// and result document are computed by the same code as the C++ row's.
#pragma once

#include "bench/runner.h"

#include <filesystem>
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

// Runs `config` as `implementation` (a python-* name) in the Python at `python` (the interpreter whose torch the
// build used, or STEPWISE_PYTHON), with `workdir` for the request (removed afterwards). Never throws for the run's
// own failures: they come back as a failed RunResult with the reason. `result.extra` gets what only Python rows
// have (compile_s, versions).
RunResult run_python_configuration(const RunConfig& config, const std::shared_ptr<const Tokens>& tokens,
                                   const std::string& implementation, const std::filesystem::path& workdir);

// The interpreter Python rows run in: STEPWISE_PYTHON, else the one the build found torch in.
std::string python_interpreter();

}  // namespace stepwise::bench
