// The progress line and the seeds' lines while training to a target.
#include "ablations/run/progress_line.h"

#include "ablations/tables/text_table.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

namespace stepwise::ablations {

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled && isatty(STDOUT_FILENO)) {
  if (const char* end = std::getenv("STEPWISE_PLAN_END"); end && *end) plan_end_ = std::atof(end);
}

std::string ProgressLine::with_time_left(std::string line) const {
  if (!plan_end_) return line;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double left = *plan_end_ - now;
  return line + "  (plan: " + (left > 0 ? fixed(left / 60, 1) + " min left" : fixed(-left / 60, 1) + " min over") + ")";
}

void ProgressLine::begin(const std::string& title) {
  title_ = title;
  if (!enabled_) return;
  std::cout << title << std::flush;
  last_width_ = title.size();
}

void ProgressLine::update(const bench::Progress& p) {
  if (!enabled_) return;
  std::string line = title_ + "  ";
  if (p.warmup) {
    line += "warm-up done";
  } else {
    line += "step " + std::to_string(p.step) + " (>= " + std::to_string(p.config->timing.stop.min_steps) + ")";
    if (p.tokens_per_s) line += "  " + with_commas(*p.tokens_per_s) + " tok/s";
    if (p.noise) line += "  noise " + percent(*p.noise);
  }
  line = with_time_left(line);
  std::cout << "\r" << line << std::string(line.size() < last_width_ ? last_width_ - line.size() : 0, ' ')
            << std::flush;
  last_width_ = line.size();
}

void ProgressLine::update_text(const std::string& text) {
  if (!enabled_) return;
  const std::string line = with_time_left(title_ + "  " + text);
  std::cout << "\r" << line << std::string(line.size() < last_width_ ? last_width_ - line.size() : 0, ' ')
            << std::flush;
  last_width_ = line.size();
}

std::string convergence_progress(const bench::SeedRun& run, double target) {
  if (run.curve.empty()) return "warm-up";
  const auto& last = run.curve.back();
  std::string text = "step " + std::to_string(last.step) + "  val " + fixed(last.val_loss, 3) + " -> " +
                     fixed(target, 3) + "  " + fixed(last.time_s, 1) + " s";
  if (run.curve.size() >= 2) {
    const auto& before = run.curve[run.curve.size() - 2];
    const double rate = (before.val_loss - last.val_loss) / std::max(last.time_s - before.time_s, 1e-9);  // per s
    if (rate > 0 && last.val_loss > target) text += "  ~" + fixed((last.val_loss - target) / rate, 0) + " s to go";
  }
  return text;
}

std::string seed_line(const bench::SeedRun& run, double target) {
  if (run.status != "ok") return run.stop_reason + ": " + run.reason.value_or("");
  const double best =
      run.curve.empty() ? NAN : std::min_element(run.curve.begin(), run.curve.end(), [](auto& a, auto& b) {
                                  return a.val_loss < b.val_loss;
                                })->val_loss;
  if (!run.reached)
    return "did not reach " + fixed(target, 3) + " (" + run.stop_reason + "; best " + fixed(best, 3) + " after " +
           std::to_string(run.curve.empty() ? 0 : run.curve.back().step) + " steps)";
  return "reached " + fixed(target, 3) + " at step " + std::to_string(*run.steps) + " (" +
         with_commas(static_cast<double>(*run.tokens)) + " tokens) in " + fixed(*run.time_s, 1) + " s (+ " +
         fixed(run.eval_s, 1) + " s evaluating, " + fixed(run.warmup_s, 1) + " s warm-up)";
}

void ProgressLine::end() {
  if (enabled_) std::cout << "\r" << std::string(last_width_, ' ') << "\r" << std::flush;
}

std::string one_line_summary(const nlohmann::json& doc) {
  const auto& summary = doc["summary"];
  std::string reason = doc["reason"].is_string() ? doc["reason"].get<std::string>() : "";
  if (summary.is_null()) return doc["status"].get<std::string>() + (reason.empty() ? "" : ": " + reason);
  const auto& ms = summary["step_ms"];
  const auto& loss = summary["loss"];
  auto loss_text = [](const nlohmann::json& v) { return v.is_null() ? std::string("nan") : fixed(v.get<double>(), 3); };
  std::string line = with_commas(summary["tokens_per_s"].get<double>()) + " tok/s, " +
                     fixed(ms["median"].get<double>(), 1) +
                     " ms/step (n=" + std::to_string(summary["steps"].get<int>()) + ", noise " +
                     (ms["noise"].is_null() ? std::string("n/a") : percent(ms["noise"].get<double>())) +
                     (summary.value("short", false) ? ", short: --max-time before --min-steps" : "") + "), loss " +
                     loss_text(loss["first"]) + " -> " + loss_text(loss["last"]) + " [" +
                     loss["check"]["status"].get<std::string>() + "]";
  if (doc["status"] != "ok") line = doc["status"].get<std::string>() + ": " + reason + "; measured " + line;
  return line;
}

}  // namespace stepwise::ablations
