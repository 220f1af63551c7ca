// copy: host-to-device copies from pageable or pinned memory, blocking or non_blocking, with bytes/s.
#include "bench/micro/micro.h"

#include <ATen/ATen.h>

namespace stepwise::micro {

namespace {

struct Variant {
  const char* name;
  bool pinned, non_blocking;
};
const Variant kVariants[] = {{"pageable_blocking", false, false},
                             {"pinned_blocking", true, false},
                             {"pageable_non_blocking", false, true},
                             {"pinned_non_blocking", true, true}};

void run_copy(benchmark::State& state, const MicroContext& ctx, Variant v) {
  if (!require(state, ctx.cuda(), "host-to-device copies need a CUDA device")) return;
  const int64_t bytes = state.range(0);
  auto host = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).pinned_memory(v.pinned));
  auto device = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(ctx.device));
  run_timed(state, ctx, [&] { device.copy_(host, v.non_blocking); });
  state.SetBytesProcessed(state.iterations() * bytes);
}

}  // namespace

void register_copy(const MicroContext& ctx) {
  // One GPT-2 batch of int64 token ids (8 x 1024 x 8 bytes = 64 KiB), then larger transfers for the bandwidth.
  for (const auto& v : kVariants)
    register_benchmark(ctx, std::string("copy/host_to_device/") + v.name,
                       [&ctx, v](benchmark::State& s) { run_copy(s, ctx, v); })
        ->ArgNames({"bytes"})
        ->RangeMultiplier(16)
        ->Range(64 << 10, 64 << 20);
}

}  // namespace stepwise::micro
