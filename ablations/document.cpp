// result_document.
#include "ablations/document.h"

#include "ablations/flags.h"
#include "bench/result_json.h"

namespace stepwise::ablations {

nlohmann::json flags_info() {
  auto j = nlohmann::json::array();
  for (const auto& f : flag_table())
    j.push_back({{"name", f.name}, {"summary", f.summary}, {"reference", f.reference}, {"stage", f.stage},
                 {"applies", to_string(f.applies)}});
  return j;
}

nlohmann::json result_document(const RunContext& context, const Suite& suite, const PlannedConfig& p,
                               const bench::RunResult* r, const bench::LossCheck& check) {
  nlohmann::json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["tool"] = "stepwise";
  doc["run_id"] = context.run_id;
  doc["name"] = suite.name + "/" + file_stem(p.index, p.step.label);
  if (r) {
    doc["status"] = r->status;
    doc["reason"] = r->reason ? nlohmann::json(*r->reason) : nlohmann::json();
  } else {
    doc["status"] = "skipped";
    doc["reason"] = p.skip_reason.value_or("skipped");
  }
  doc["suite"] = {{"name", suite.name},
                  {"kind", to_string(suite.kind)},
                  {"index", p.index},
                  {"count", suite.steps.size()},
                  {"label", p.step.label},
                  {"added", p.step.added},
                  {"removed", p.step.removed}};
  auto config = bench::config_json(p.run, r);
  config["flags"] = p.effective;
  config["flags_requested"] = p.step.flags;
  auto skipped = nlohmann::json::array();
  for (const auto& [flag, why] : p.skipped_flags) skipped.push_back({{"flag", flag}, {"reason", why}});
  config["flags_skipped"] = skipped;
  doc["config"] = config;
  doc["env"] = context.env;
  doc["summary"] = r ? bench::summary_json(p.run, *r, check) : nlohmann::json();
  doc["steps"] = r ? bench::steps_json(r->steps) : nlohmann::json::array();
  doc["warmup"] = r ? bench::steps_json(r->warmup) : nlohmann::json::array();
  doc["max_batch_probe"] = r ? bench::probe_json(r->probe) : nlohmann::json();
  doc["trace"] = r ? r->trace : nlohmann::json();
  doc["distributed"] = r ? r->distributed : nlohmann::json();
  doc["flags_info"] = flags_info();
  return doc;
}

}  // namespace stepwise::ablations
