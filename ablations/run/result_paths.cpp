// ResultPaths: the run's folder from --out, --resume or the run id, the suite's folder inside it, and each row's file.
#include "ablations/run/result_paths.h"

#include "bench/source_dir.h"

namespace stepwise::ablations {

ResultPaths::ResultPaths(const std::optional<std::string>& out, const std::optional<std::filesystem::path>& resume_dir,
                         const std::string& run_id, const std::string& suite_name) {
  if (out && out->ends_with(".json")) {
    single_file_ = std::filesystem::absolute(*out);
    folder_ = single_file_->parent_path();
    return;
  }
  const auto run_dir =
      out ? std::filesystem::absolute(*out) : resume_dir.value_or(bench::source_dir() / "results" / run_id);
  folder_ = run_dir / suite_name;
}

std::filesystem::path ResultPaths::of(const PlannedConfig& p, const std::string& implementation) const {
  const bool engine = implementation == "libtorch";
  if (single_file_ && engine) return *single_file_;
  const auto stem = single_file_ ? single_file_->stem().string() : file_stem(p.index, p.row.label);
  return folder_ / (stem + (engine ? "" : "." + implementation) + ".json");
}

}  // namespace stepwise::ablations
