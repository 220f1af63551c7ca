// Runs the planned configurations of one suite in order: each is run (or recorded as skipped), loss-checked
// against the suite's baseline, written to its own JSON file at once, and summarised on the terminal.
#pragma once

#include "ablations/result_document.h"
#include "ablations/plan.h"
#include "ablations/suite.h"
#include "bench/data/tokens.h"
#include "bench/distributed/collectives.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace stepwise::ablations {

struct SuiteOutcome {
  size_t ok = 0, skipped = 0, failed = 0;
  bool interrupted = false;
  std::vector<nlohmann::json> documents;
  std::vector<std::filesystem::path> files;
};

// `single_file` set: the only configuration goes exactly there (--out FILE.json). Data parallel (`collectives`):
// every rank runs every configuration, a configuration that failed on any rank counts as failed on all, and only
// rank 0 writes files and prints.
SuiteOutcome execute_suite(const Suite& suite, const std::vector<PlannedConfig>& planned, const RunContext& context,
                           std::shared_ptr<const bench::Tokens> tokens, const std::filesystem::path& suite_dir,
                           const std::optional<std::filesystem::path>& single_file, bool progress,
                           std::shared_ptr<bench::Collectives> collectives = nullptr);

}  // namespace stepwise::ablations
