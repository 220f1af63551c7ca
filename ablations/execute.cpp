// execute_suite: each planned configuration run (or skipped), loss-checked against the suite's baseline, recorded
// in its result document and written at once, so nothing measured is lost when a later one fails or is interrupted.
#include "ablations/execute.h"

#include "ablations/console.h"
#include "ablations/interrupt.h"
#include "bench/atomic_file.h"
#include "bench/runner.h"

#include <cstdlib>
#include <iostream>
#include <optional>

namespace stepwise::ablations {

namespace {

// Tests only (tests/e2e/test_distributed.py): STEPWISE_TEST_FAIL_RANK=R fails rank R's configurations at their second
// measured step while the other ranks run on, the case a data-parallel run must end cleanly instead of hanging.
std::optional<size_t> injected_failure(const std::shared_ptr<bench::Collectives>& collectives) {
  const char* rank = std::getenv("STEPWISE_TEST_FAIL_RANK");
  if (!rank || !collectives || std::to_string(collectives->rank()) != rank) return std::nullopt;
  return 1;
}

}  // namespace

SuiteOutcome execute_suite(const Suite& suite, const std::vector<PlannedConfig>& planned, const RunContext& context,
                           std::shared_ptr<const bench::Tokens> tokens, const std::filesystem::path& suite_dir,
                           const std::optional<std::filesystem::path>& single_file, bool progress,
                           std::shared_ptr<bench::Collectives> collectives) {
  SuiteOutcome outcome;
  const bool leader = !collectives || collectives->rank() == 0;
  ProgressLine line(progress && leader);
  std::optional<std::vector<double>> baseline_losses;
  std::optional<int64_t> baseline_batch;
  for (const auto& p : planned) {
    if (outcome.interrupted) break;
    const std::string title = "[" + suite.name + " " + std::to_string(p.index + 1) + "/" +
                              std::to_string(planned.size()) + "] " + p.step.label;
    nlohmann::json doc;
    if (p.skip_reason) {
      doc = result_document(context, suite, p, nullptr, {});
      ++outcome.skipped;
      if (leader) std::cout << title << ": skipped (" << *p.skip_reason << ")\n";
    } else {
      line.begin(title);
      bench::RunHooks hooks{[&](const bench::Progress& pr) { line.update(pr); }, &interrupt_requested(), collectives,
                            injected_failure(collectives)};
      bench::RunResult r = bench::run_configuration(p.run, tokens, hooks);
      if (collectives && collectives->any_failed(suite.name + "/" + std::to_string(p.index), r.status == "failed") &&
          r.status == "ok") {
        r.status = "failed";
        r.reason = "failed on another rank";
      }
      line.end();
      const auto losses = bench::losses(r);
      const size_t window = p.run.timing.loss_window;
      const bool is_baseline = p.index == 0 && suite.first_is_baseline;
      LossCheck check =
          is_baseline ? baseline_loss(losses, window)
                       : check_loss(losses, baseline_losses ? std::optional<std::span<const double>>(*baseline_losses)
                                                                   : std::nullopt,
                                           window, p.run.bf16, baseline_batch == r.batch_size);
      if (is_baseline && r.status == "ok") {
        baseline_losses = losses;
        baseline_batch = r.batch_size;
      }
      doc = result_document(context, suite, p, &r, check);
      if (r.status == "ok") ++outcome.ok;
      else ++outcome.failed;
      if (r.stop_reason == "interrupted") outcome.interrupted = true;
      if (leader) std::cout << title << ": " << one_line_summary(doc) << "\n";
    }
    if (!leader) continue;
    const auto path = single_file ? *single_file : suite_dir / (file_stem(p.index, p.step.label) + ".json");
    bench::write_file_atomically(path, doc.dump(1) + "\n");
    outcome.files.push_back(path);
    outcome.documents.push_back(std::move(doc));
  }
  return outcome;
}

}  // namespace stepwise::ablations
