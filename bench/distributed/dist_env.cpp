// Reading a rank's place in the run from torchrun's environment (RANK, WORLD_SIZE, ...), with a clear message for
// each inconsistent value.
#include "bench/distributed/dist_env.h"

#include <cstdlib>
#include <stdexcept>

namespace stepwise::bench {

namespace {

int integer(const char* name, const char* value) {
  try {
    size_t used = 0;
    const int v = std::stoi(value, &used);
    if (used != std::string(value).size()) throw std::invalid_argument("");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(name) + "='" + value + "' is not an integer");
  }
}

}  // namespace

std::optional<DistEnv> dist_env_from_environment() {
  const char* rank = std::getenv("RANK");
  const char* world = std::getenv("WORLD_SIZE");
  if (!rank && !world) return std::nullopt;
  if (!rank || !world) throw std::invalid_argument("RANK and WORLD_SIZE must be set together");
  DistEnv env;
  env.rank = integer("RANK", rank);
  env.world_size = integer("WORLD_SIZE", world);
  if (env.world_size < 1 || env.rank < 0 || env.rank >= env.world_size)
    throw std::invalid_argument("RANK=" + std::to_string(env.rank) +
                                " is outside WORLD_SIZE=" + std::to_string(env.world_size));
  const char* local = std::getenv("LOCAL_RANK");
  env.local_rank = local ? integer("LOCAL_RANK", local) : env.rank;
  if (const char* addr = std::getenv("MASTER_ADDR")) env.master_addr = addr;
  if (const char* port = std::getenv("MASTER_PORT")) env.master_port = integer("MASTER_PORT", port);
  return env;
}

}  // namespace stepwise::bench
