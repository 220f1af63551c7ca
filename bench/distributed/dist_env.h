// Where a rank stands in a data-parallel run, read from the environment torchrun (or ./ablate) sets.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace stepwise::bench {

struct DistEnv {
  int rank = 0, world_size = 1, local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// RANK and WORLD_SIZE (with LOCAL_RANK, MASTER_ADDR, MASTER_PORT, as torchrun sets them), or nullopt when this
// process is not a rank. Throws std::invalid_argument naming a malformed or inconsistent variable.
std::optional<DistEnv> dist_env_from_environment();

}  // namespace stepwise::bench
