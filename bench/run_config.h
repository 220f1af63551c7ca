// RunConfig: everything the engine reads for one configuration, already resolved from flags and options.
#pragma once

#include "bench/data/loader.h"
#include "bench/data/tokens.h"
#include "bench/optim/adamw.h"
#include "bench/stats.h"
#include "bench/step_timer.h"
#include "model/config.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace stepwise::bench {

enum class Bf16Mode {
  Pure,      // weights, gradients, optimizer state and activations in bf16 (Raschka's step 5)
  Autocast,  // fp32 weights, bf16 compute under autocast (nanoGPT, Karpathy)
};
std::string to_string(Bf16Mode m);
// Throws std::invalid_argument naming the valid choices.
Bf16Mode bf16_mode_from_string(const std::string& s);

struct TimingOptions {
  int64_t warmup = 3;  // steps run and recorded, but excluded from every statistic
  StopRule stop;
  size_t check_every = 5;  // steps per chunk: the host reads a chunk's events and losses at once (its only syncs)
  HostSync host_sync = HostSync::Lagged;  // read each chunk while the next one runs (bench/step_timer.h)
  size_t loss_window = 10;  // the loss check compares the mean of the last this-many steps both runs share
};

struct DataOptions {
  std::optional<std::filesystem::path> path;  // none = the synthetic source
  TokenFileFormat format = TokenFileFormat::Auto;
};

struct RunConfig {
  std::string preset = "gpt2-124m";
  model::GPTConfig model;  // carries dynamic_mask, native_layers, flash, sdpa_backend, vocab_padding
  int64_t batch_size = 8;
  int64_t seq_len = 1024;
  c10::Device device = c10::kCPU;
  uint64_t seed = 123;
  AdamWOptions adamw;
  AdamWKind adamw_kind = AdamWKind::Reference;
  bool tf32 = false;
  bool bf16 = false;
  Bf16Mode bf16_mode = Bf16Mode::Pure;
  CopyMode copy_mode = CopyMode::Pageable;
  bool cuda_graph = false;     // the compile flag: capture the whole step once, replay it
  bool max_batch = false;      // probe the largest power-of-two batch that fits, then measure at it
  int64_t max_batch_limit = 0; // probe bound; 0 = the default for the device
  TimingOptions timing;
  DataOptions data;
  size_t trace_steps = 0;  // --trace: steps traced with CUPTI after the measured ones (0 = no trace)

  // The matmul precision MFU is computed against: bf16 if in effect, else tf32 on CUDA, else fp32.
  std::string precision() const;
  // The probe's bound when max_batch_limit is 0: large on a GPU (memory decides), 4x the base on a CPU.
  int64_t effective_max_batch_limit() const;
};

}  // namespace stepwise::bench
