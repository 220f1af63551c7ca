// stepwise_micro: Google Benchmark micro-benchmarks of each component a flag changes, at GPT-2 shapes.
//
//   stepwise_micro [--device=auto|cpu|cuda[:N]] [--presets=tiny,gpt2-124m] [Google Benchmark flags]
//   e.g. --benchmark_filter='^attention/' --benchmark_repetitions=9 --benchmark_out=micro.json
//        --benchmark_out_format=json
//
// Families (bench/micro/*.cpp): attention, layernorm, gelu, adamw, muon, matmul, head, copy, mask. Names read
// family/preset/variant/details/B:../T:..; cases that cannot run on the device are skipped with the reason.
#include "bench/device.h"
#include "bench/measure/env.h"
#include "bench/micro/micro.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <iostream>
#include <sstream>

namespace sm = stepwise::micro;

namespace {

constexpr int kExitUsage = 2;

// Takes our own options out of argv so Google Benchmark sees only its flags.
bool take_option(int& argc, char** argv, const char* name, std::string& value) {
  const size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
      value = argv[i] + n + 1;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      return true;
    }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "auto", presets;
  take_option(argc, argv, "--device", device);
  take_option(argc, argv, "--presets", presets);
  sm::MicroContext ctx;
  try {
    ctx.device = stepwise::bench::resolve_device(device);
    stepwise::bench::use_device(ctx.device);
    if (presets.empty()) presets = ctx.cuda() ? "gpt2-124m" : "tiny";
    std::stringstream list(presets);
    for (std::string name; std::getline(list, name, ',');) ctx.presets.push_back(&stepwise::model::preset(name));
  } catch (const std::exception& e) {
    std::cerr << "stepwise_micro: " << e.what() << "\n";
    return kExitUsage;
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kExitUsage;
  benchmark::AddCustomContext("stepwise_device", ctx.device.str() + ": " + stepwise::bench::device_name(ctx.device));
  benchmark::AddCustomContext("stepwise_presets", presets);
  // The same environment facts a result file carries (git state, driver, CUDA, cuDNN, threads), as strings.
  benchmark::AddCustomContext("torch_version", STEPWISE_TORCH_VERSION);
  const nlohmann::json env = stepwise::bench::capture_env(ctx.device);
  for (const auto& [key, value] : env.items())
    benchmark::AddCustomContext("stepwise_" + key, value.is_string() ? value.get<std::string>() : value.dump());
  std::string baselines;
  for (const auto& b : sm::family_baselines())
    baselines += (baselines.empty() ? "" : ",") + std::string(b.family) + "=" + b.variant;
  benchmark::AddCustomContext("stepwise_baselines", baselines);

  sm::register_attention(ctx);
  sm::register_layers(ctx);
  sm::register_adamw(ctx);
  sm::register_muon(ctx);
  sm::register_matmul(ctx);
  sm::register_head(ctx);
  sm::register_copy(ctx);
  sm::register_mask(ctx);
  sm::register_evaluation(ctx);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
