// RunConfig: the one description of a configuration, from the command line to the step. The CLI fills it, each
// flag (ablations/flags/<name>.cpp) switches the field of its own name, and the engine reads it as is: nothing is
// copied field by field into another struct on the way.
#pragma once

#include "bench/host_allocator.h"
#include "bench/lr_schedule.h"
#include "bench/optim/adamw.h"
#include "bench/optim/muon.h"
#include "bench/stats.h"
#include "bench/step_timer.h"
#include "bench/tokens.h"
#include "model/config.h"
#include "model/enum_names.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace stepwise::bench {

// How bf16 acts when the bf16 flag is on (--bf16-mode).
enum class Bf16Mode {
  Pure,      // weights, gradients, optimizer state and activations in bf16 (Raschka's step 5)
  Autocast,  // fp32 weights, bf16 compute under autocast (nanoGPT, Karpathy)
};
inline constexpr auto kBf16ModeNames =
    model::enum_names<Bf16Mode>("bf16 mode", {{Bf16Mode::Pure, "pure"}, {Bf16Mode::Autocast, "autocast"}});
std::string to_string(Bf16Mode m);
// Throws std::invalid_argument naming the valid choices.
Bf16Mode bf16_mode_from_string(const std::string& s);

// How pinned_memory copies a batch when the flag is on (--pinned-mode).
enum class PinnedMode {
  Async,     // non_blocking on a copy stream that overlaps compute
  Blocking,  // a blocking copy from pinned memory: Raschka's step 4, which measured no gain
};
inline constexpr auto kPinnedModeNames =
    model::enum_names<PinnedMode>("pinned mode", {{PinnedMode::Async, "async"}, {PinnedMode::Blocking, "blocking"}});
std::string to_string(PinnedMode m);
// Throws std::invalid_argument naming the valid choices.
PinnedMode pinned_mode_from_string(const std::string& s);

// What Auto runs on `device` (other choices are returned as they are): bf16 on CUDA, and on a CPU whose bf16 runs on
// its own instructions (avx512_bf16 or amx_bf16, not capped: bench/device.h's cpu_bf16_emulated); fp32 on a CPU
// that would emulate it. Measured one Muon step on one core of a Xeon with avx512_bf16, against the forloop AdamW over
// every parameter it replaces (CPU ms, bench/micro's muon family): mini 66 (AdamW) / 81 (bf16) / 96 (fp32), small
// 214 / 447 / 1172; with bf16 emulated (ONEDNN_MAX_CPU_ISA=AVX512_CORE) small's bf16 is 1504, and at AVX2
// (ATEN_CPU_CAPABILITY=avx2) 19990 against fp32's 1201: the native bf16 is the faster and the emulated one by far the
// slower, so Auto follows the hardware. Both land in the quintic's singular-value band (tests/bench/optim). Here, not
// in optim/, because it reads the device: the engine and the Python rows' request resolve it before Muon is built.
MuonNsDtype resolved_ns_dtype(MuonNsDtype d, const c10::Device& device);

struct TimingOptions {
  int64_t warmup = 3;  // steps run and recorded, but excluded from every statistic
  StopRule stop;
  size_t check_every = 5;  // steps per chunk: the host reads a chunk's events and losses at once (its only syncs)
  HostSync host_sync = HostSync::Lagged;  // read each chunk while the next one runs (bench/step_timer.h)
};

// Where the tokens come from (bench/data/source.h reads them).
struct DataOptions {
  // A token file, a glob of shards (expanded, sorted, read in order as one stream), or corpus:NAME (a corpus that
  // scripts/corpus.py built into the cache: its train.bin, and its val.bin as the validation stream); none = the
  // synthetic source.
  std::optional<std::string> path;
  TokenFileFormat format = TokenFileFormat::Auto;
  // The validation stream, a file or a glob. None: the source's own val.bin (a corpus, or nanoGPT's val.bin beside a
  // train.bin), else the tail val_fraction of the training stream, held out so the training sampler never sees it.
  std::optional<std::string> val_path;
  double val_fraction = 0.1;
  // What was read, filled once the tokens are loaded (bench/data/source.h: TokenSource::provenance), so each result
  // records its data: files with size and sha256, the validation stream, the vocabulary and where it came from.
  nlohmann::json provenance;
};

// --target-loss: train each seed until the validation loss, evaluated every eval_every steps on eval_batches fixed
// held-out batches, reaches `loss`, instead of timing steps for throughput (bench/measure/convergence.h).
struct TargetOptions {
  double loss = 0;           // the validation loss to reach
  int64_t eval_every = 25;   // training steps between evaluations
  int64_t eval_batches = 8;  // validation batches of batch_size x seq_len, the same ones at every evaluation
  int64_t max_steps = 5000;  // training steps after which a seed that has not reached the target stops
  double max_time_s = 600;   // timed training seconds after which it stops (evaluation not counted)
  int64_t warmup_steps = 2;  // steps run, timed apart, then undone (weights, optimizer, data order, dropout)
  int64_t seeds = 3;         // the run's seed, then the next ones: each moves weights, data order and dropout
  // The horizon N, declared before the runs (--step-budget, or the suite's own for the preset): a schedule that
  // depends on the run's length (cosine, trapezoid) ends at N, every seed trains to exactly N whether or not it
  // crossed the target on the way (the first crossing is still its time to target; a seed that did not cross is
  // censored at N), and the speedrun's record rule (ablations/judges/record_rule.h) judges the validation loss at N.
  // Unset: no schedule decays (resolve_run) and each seed stops at the target or a cap.
  std::optional<int64_t> step_budget;
  std::string budget_from;  // where N came from ("--step-budget", "the suite's own for preset tiny"), or why none
  double record_p = 0.01;   // the speedrun's significance level
  // Whether rows are judged by the record rule at all: on for a suite that runs a learning flag (the speedrun's), or
  // when --step-budget or --record-p asks; off for the speed flags, whose re-runs to the budget would double a
  // time-to-target run's cost for a rule they are not meant to meet (resolve_run decides).
  bool record_rule = false;
};

struct RunConfig {
  std::string preset = "gpt2-124m";
  // The model's shape and the seven model flags: dynamic_mask, native_layers, flash, vocab_padding, checkpoint,
  // chunked_ce and fp8, with their options (sdpa_backend, checkpoint_mode, ...), as GPTConfig fields of those names.
  model::GPTConfig model;
  int64_t batch_size = 8;
  int64_t seq_len = 1024;
  c10::Device device = c10::kCPU;
  uint64_t seed = 123;
  AdamWOptions adamw;
  // The optimizer when fused_adamw is off (--adamw-baseline): by default what torch.optim.AdamW() picks on the device,
  // the single-tensor loop on a CPU and foreach on CUDA, as Raschka's and Karpathy's baselines ran.
  AdamWKind adamw_baseline = AdamWKind::Forloop;

  // The engine's flags, each named as its flag, off by default: the baseline is all off.
  bool tf32 = false;
  bool fused_adamw = false;
  bool pinned_memory = false;
  PinnedMode pinned_mode = PinnedMode::Async;
  bool bf16 = false;
  Bf16Mode bf16_mode = Bf16Mode::Pure;
  bool compile = false;
  bool max_batch = false;
  int64_t max_batch_limit = 0;  // the max_batch probe's bound; 0 = the default for the device
  double max_batch_time_s = 0;  // the max_batch probe's time cap (--max-batch-time); 0 = the default for the device
  // The process the row runs in is started under this host allocator (bench/host_allocator.h); off: the C library's.
  bool host_allocator = false;
  HostAllocatorMode host_allocator_mode = HostAllocatorMode::GlibcTunables;
  // Data parallel: AdamW's state sharded across the ranks (ZeRO-1, bench/distributed/zero1.h) instead of replicated.
  bool zero1 = false;
  // Muon for the blocks' matrices, with muon_options; the AdamW above (adamw, fused_adamw) for the other parameters
  // (bench/optim/muon.h).
  bool muon = false;
  MuonOptions muon_options;
  // The data-parallel ranks this configuration runs on (1: a single process); set by ./ablate once the group is up.
  int world_size = 1;

  LrSchedule lr_schedule;  // --lr-schedule: constant (the published tables'), warm-up + cosine, or trapezoid

  TimingOptions timing;
  std::optional<TargetOptions> target;  // set: time to a target loss; none: step throughput
  DataOptions data;
  size_t trace_steps = 0;  // --trace: steps traced with CUPTI after the measured ones (0 = no trace)
  size_t count_steps = 0;  // --count-ops: steps counted by the profiler after the measured ones (0 = none)

  // The AdamW that runs: fused with fused_adamw, else the baseline.
  AdamWKind optimizer() const { return fused_adamw ? AdamWKind::Fused : adamw_baseline; }
  // The matmul precision MFU is computed against: fp8 if in effect (its largest GEMMs), else bf16, else tf32 on CUDA,
  // else fp32.
  std::string precision() const;
  // The probe's bound when max_batch_limit is 0: large on a GPU (memory decides), 4x the base on a CPU.
  int64_t effective_max_batch_limit() const;
  // The probe's time cap when max_batch_time_s is 0: generous on a GPU, where each try is a fresh model's step of a
  // few seconds at most and stopping early would measure the base batch; --max-time on a CPU, where a slow step
  // (bf16 emulated) must not hold a short job for minutes.
  double effective_max_batch_time() const;
};

}  // namespace stepwise::bench
