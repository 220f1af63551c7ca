// The tables at the end of a run are the report's: ./ablate prints its plan, its progress and one line per row, and
// hands the files it wrote to `./report show`, which draws every table with the renderer report.md uses, so a row
// shows the same numbers and the same interval in the terminal and in report.md (docs/design/one-renderer.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace stepwise::ablations {

// Which sections `./report show` prints: a run's (its suites' tables), a sweep's, a budget search's.
enum class ReportSection { Runs, Sweeps, Searches };

// The argv of `./report show --only=SECTION PATHS...`, the report found in the checkout (bench::source_dir()).
std::vector<std::string> report_show_command(const std::vector<std::filesystem::path>& paths, ReportSection only);

// Runs that command with this process's stdout; when it cannot run or fails, says so on stderr with the command to
// draw them later (the results are written either way, so the run's exit status does not change). Returns its status.
int show_report_tables(const std::vector<std::filesystem::path>& paths, ReportSection only);

}  // namespace stepwise::ablations
