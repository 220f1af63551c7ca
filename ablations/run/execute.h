// Runs the planned configurations of one suite in order: each is run (or recorded as skipped) by every requested
// implementation — stepwise's engine, then PyTorch Python on the same weights and batches — loss-checked against the
// suite's baseline, recorded in its result document, written to its own JSON file at once, and summarised on the
// terminal.
#pragma once

#include "ablations/run/plan.h"
#include "ablations/run/result_document.h"
#include "ablations/run/result_paths.h"
#include "ablations/run/suite.h"
#include "bench/distributed/collectives.h"
#include "bench/tokens.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

struct ExecuteOptions {
  ResultPaths paths;  // where each row's file goes
  bool progress = true;
  // "libtorch" and/or python-* (bench/python/python_step.h), run one after another for each configuration.
  std::vector<std::string> implementations{"libtorch"};
  bool python_at_ends_only = false;  // --implementations-at=ends: other implementations only for the baseline and
                                     // the suite's last configuration
  // --resume: a row whose result is already where it would be written, ok, with the same settings_hash, is kept and
  // not run again; the rest run.
  bool resume = false;
  // --target-loss (RunConfig::target): the held-out stream every evaluation reads.
  std::shared_ptr<const bench::Tokens> val_tokens;
  // The command line after the program's name: a row that wants another host allocator than this process's runs in
  // a child process of the same command, started under it (bench/host_allocator.h), told to run that row only.
  std::vector<std::string> command_line;
  // In such a child (--row-in-child): the one row to run; the others are not run, and the baseline's results are read
  // from the files the parent wrote, for the loss check and the convergence guard.
  std::optional<size_t> only_row;
  // --rows: the rows this process runs (empty: all); the others are neither run nor written, and the baseline's
  // results, when an earlier call wrote them into the folder, are read back for the checks as in a child.
  std::vector<size_t> rows;
};

struct SuiteOutcome {
  size_t ok = 0, skipped = 0, failed = 0, kept = 0;  // kept: ok results --resume found and did not run again
  bool interrupted = false;
  std::vector<nlohmann::json> documents;
  std::vector<std::filesystem::path> files;
};

// Data parallel (`collectives`): every rank runs every configuration, a configuration that failed on any rank counts
// as failed on all, and only rank 0 writes files and prints.
SuiteOutcome execute_suite(const Suite& suite, const std::vector<PlannedConfig>& planned, const RunContext& context,
                           std::shared_ptr<const bench::Tokens> tokens, const ExecuteOptions& options,
                           std::shared_ptr<bench::Collectives> collectives = nullptr);

}  // namespace stepwise::ablations
