// Where a run's result files go, decided once: a folder per suite under the run's folder, or, for a single
// configuration given --out FILE.json, that file (its Python rows beside it, named after it).
#pragma once

#include "ablations/run/plan.h"

#include <filesystem>
#include <optional>
#include <string>

namespace stepwise::ablations {

class ResultPaths {
 public:
  // `out`: --out (a folder, or a .json file); `resume_dir`: --resume DIR, which is the run's folder; else the run's
  // folder is results/<run_id> in the checkout.
  ResultPaths(const std::optional<std::string>& out, const std::optional<std::filesystem::path>& resume_dir,
              const std::string& run_id, const std::string& suite_name);

  // The file of `p`'s row run by `implementation`: NN_label.json, or NN_label.python-eager.json beside it.
  std::filesystem::path of(const PlannedConfig& p, const std::string& implementation) const;
  // The folder results are written into (checked writable before anything runs).
  const std::filesystem::path& folder() const { return folder_; }
  // What the terminal names as "results in ...": the single file, or the suite's folder.
  std::filesystem::path shown() const { return single_file_.value_or(folder_); }

 private:
  std::filesystem::path folder_;
  std::optional<std::filesystem::path> single_file_;
};

}  // namespace stepwise::ablations
