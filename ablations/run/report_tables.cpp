// ./ablate's end-of-run tables, drawn by ./report show.
#include "ablations/run/report_tables.h"

#include "ablations/run/interrupt.h"
#include "bench/child_process.h"
#include "bench/source_dir.h"

#include <iostream>

namespace stepwise::ablations {

namespace {

std::string section_name(ReportSection s) {
  switch (s) {
    case ReportSection::Runs: return "runs";
    case ReportSection::Sweeps: return "sweeps";
    case ReportSection::Searches: return "searches";
  }
  return "runs";
}

std::string shell_words(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) line += (line.empty() ? "" : " ") + word;
  return line;
}

}  // namespace

std::vector<std::string> report_show_command(const std::vector<std::filesystem::path>& paths, ReportSection only) {
  std::vector<std::string> argv{(bench::source_dir() / "report").string(), "show", "--only=" + section_name(only)};
  for (const auto& p : paths) argv.push_back(p.string());
  return argv;
}

int show_report_tables(const std::vector<std::filesystem::path>& paths, ReportSection only) {
  if (paths.empty()) return 0;
  const auto argv = report_show_command(paths, only);
  std::cout << std::flush;  // the report's tables come after everything this process printed
  std::string why;
  int status = -1;
  try {
    status = bench::run_child_process(argv, {}, std::nullopt, &interrupt_requested());
    if (status != 0) why = "exited with status " + std::to_string(status);
  } catch (const std::exception& e) {
    why = std::string("could not start: ") + e.what();
  }
  if (!why.empty())
    std::cerr << "tables: the report " << why << "; the results are written, and `" << shell_words(argv)
              << "` draws them" << std::endl;
  return status;
}

}  // namespace stepwise::ablations
