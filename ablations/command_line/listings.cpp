// The listings and --describe, from the flag table, the presets and the suites.
#include "ablations/command_line/listings.h"

#include "ablations/flag_table/flags.h"
#include "ablations/run/suite.h"
#include "ablations/tables/text_table.h"

#include <nlohmann/json.hpp>

#include <utility>
#include <vector>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

// Weights, gradients and AdamW's two moments: four copies of the parameters.
constexpr double kTrainingStateCopies = 4;

}  // namespace

std::string list_flags(bool json, bool verbose) {
  if (json) {
    auto j = nlohmann::json::array();
    for (const auto* f : flag_table()) {
      auto code = nlohmann::json::array();
      for (const auto& path : f->code) code.push_back(path);
      auto options = nlohmann::json::array();
      for (const auto& o : f->options) options.push_back(o.describe());
      j.push_back({{"name", f->name},
                   {"summary", f->summary},
                   {"reference", f->reference},
                   {"stage", f->stage},
                   {"math", to_string(f->math)},
                   {"applies", to_string(f->applies)},
                   {"precondition", f->precondition},
                   {"code", code},
                   {"options", options}});
    }
    return j.dump(2) + "\n";
  }
  TextTable t({{"flag"}, {"applies"}, {"stage"}, {"on: what it switches to  /  off: the reference"}});
  for (const auto* f : flag_table()) {
    t.add_row({std::string(f->name), to_string(f->applies), std::string(f->stage), "on:  " + std::string(f->summary)});
    t.add_row({"", "", "", "off: " + std::string(f->reference)});
    if (!f->precondition.empty()) t.add_row({"", "", "", "needs " + std::string(f->precondition)});
    if (verbose)
      for (const auto& path : f->code) t.add_row({"", "", "", "code: " + std::string(path)});
  }
  return t.str() + "\nAll flags are off by default: the baseline is Raschka's 00_orig.py." +
         (verbose ? "" : " --verbose adds where each flag's code lives.") + "\n";
}

std::string list_presets(bool json) {
  if (json) {
    auto j = nlohmann::json::array();
    for (const auto& p : model::presets())
      j.push_back({{"name", p.name},
                   {"description", p.description},
                   {"parameters", p.config.parameter_count()},
                   {"n_layer", p.config.n_layer()},
                   {"n_head", p.config.n_head()},
                   {"n_embd", p.config.n_embd()},
                   {"context_length", p.config.context_length()},
                   {"vocab_size", p.config.vocab_size()},
                   {"default_batch_size", p.default_batch_size},
                   {"default_seq_len", p.default_seq_len}});
    return j.dump(2) + "\n";
  }
  TextTable t({{"preset"},
               {"parameters", Align::Right},
               {"layers", Align::Right},
               {"heads", Align::Right},
               {"width", Align::Right},
               {"context", Align::Right},
               {"batch x seq"},
               {"description"}});
  for (const auto& p : model::presets()) {
    const auto& c = p.config;
    t.add_row({p.name, with_commas(static_cast<double>(c.parameter_count())), std::to_string(c.n_layer()),
               std::to_string(c.n_head()), std::to_string(c.n_embd()), std::to_string(c.context_length()),
               std::to_string(p.default_batch_size) + " x " + std::to_string(p.default_seq_len), p.description});
  }
  return t.str();
}

std::string list_suites() {
  TextTable t({{"suite"}, {"kind"}, {"configurations", Align::Right}, {"description"}});
  for (const auto& name : suite_names()) {
    const Suite s = find_suite(name);
    t.add_row({s.name, to_string(s.kind), std::to_string(s.rows.size()), s.description.substr(0, 90)});
  }
  return t.str();
}

std::string dimension_overrides(const model::GPTConfig& preset, const model::GPTConfig& m) {
  std::vector<std::string> changed;
  const auto add = [&](const char* name, int64_t was, int64_t now) {
    if (was != now) changed.push_back(std::string(name) + " " + std::to_string(now));
  };
  add("n_layer", preset.n_layer(), m.n_layer());
  add("n_head", preset.n_head(), m.n_head());
  add("n_embd", preset.n_embd(), m.n_embd());
  add("context_length", preset.context_length(), m.context_length());
  add("vocab_size", preset.vocab_size(), m.vocab_size());
  return joined(changed, ", ");
}

namespace {

// The memory flags' variants --describe estimates activation memory for: none, each checkpoint mode, chunked_ce, and
// full checkpointing with chunked_ce.
std::vector<std::pair<std::string, model::GPTConfig>> memory_variants(const model::GPTConfig& c) {
  auto plain = c;
  plain.checkpoint(false).chunked_ce(false);
  auto full = plain, selective = plain, chunked = plain;
  full.checkpoint(true).checkpoint_mode(model::CheckpointMode::Full);
  selective.checkpoint(true).checkpoint_mode(model::CheckpointMode::Selective);
  chunked.chunked_ce(true);
  auto both = full;
  both.chunked_ce(true);
  return {{"none", plain},
          {"checkpoint (full)", full},
          {"checkpoint (selective)", selective},
          {"chunked_ce", chunked},
          {"checkpoint (full) + chunked_ce", both}};
}

}  // namespace

std::string describe_preset(const std::string& name, const model::GPTConfig& c, int64_t seq_len, bool json, bool cuda) {
  const auto& p = model::preset(name);
  const auto variants = memory_variants(c);
  const std::string overrides = dimension_overrides(p.config, c);
  auto padded = c;
  padded.vocab_padding(true);
  const double n = static_cast<double>(c.parameter_count());
  const double flops = c.flops_per_token(seq_len);
  if (json)
    return nlohmann::json{
               {"preset", p.name},
               {"overrides", overrides.empty() ? nlohmann::json() : nlohmann::json(overrides)},
               {"n_layer", c.n_layer()},
               {"n_head", c.n_head()},
               {"n_embd", c.n_embd()},
               {"context_length", c.context_length()},
               {"vocab_size", c.vocab_size()},
               {"parameters", c.parameter_count()},
               {"parameters_vocab_padded", padded.parameter_count()},
               {"parameters_without_position_embedding", c.parameter_count() - c.position_embedding_parameters()},
               {"seq_len", seq_len},
               {"flops_per_token", flops},
               {"weight_bytes_fp32", n * 4},
               {"weight_bytes_bf16", n * 2},
               {"training_state_bytes_fp32", n * 4 * kTrainingStateCopies},
               {"activation_bytes_per_sequence_fp32",
                [&] {
                  nlohmann::json per = nlohmann::json::object();
                  for (const auto& [label, v] : variants)
                    per[label] = {{"bytes", v.activation_bytes_per_sequence(seq_len, 4, cuda)},
                                  {"hardware_flops_per_token", v.hardware_flops_per_token(seq_len)}};
                  return per;
                }()},
               {"activation_estimate_device", cuda ? "cuda" : "cpu"}}
               .dump(2) +
           "\n";
  TextTable t({{"preset " + p.name + (overrides.empty() ? "" : " with " + overrides)},
               {overrides.empty() ? p.description : "the preset: " + p.description}});
  t.add_row({"layers / heads / width", std::to_string(c.n_layer()) + " / " + std::to_string(c.n_head()) + " / " +
                                           std::to_string(c.n_embd()) + " (head dim " + std::to_string(c.head_dim()) +
                                           ")"});
  t.add_row({"context / vocabulary", std::to_string(c.context_length()) + " / " + std::to_string(c.vocab_size()) +
                                         " (" + std::to_string(padded.padded_vocab_size()) + " with vocab_padding)"});
  t.add_row({"parameters", with_commas(n) + " (" + with_commas(static_cast<double>(padded.parameter_count())) +
                               " with vocab_padding)"});
  t.add_row({"  without position embeddings",
             with_commas(static_cast<double>(c.parameter_count() - c.position_embedding_parameters()))});
  t.add_row({"FLOPs per token",
             fixed(flops / 1e9, 3) + " GFLOP at T=" + std::to_string(seq_len) + " (6N + 12*L*H*Q*T, nanoGPT)"});
  t.add_row({"weights fp32 / bf16", gib(n * 4) + " / " + gib(n * 2)});
  t.add_row({"weights+grads+AdamW fp32", gib(n * 4 * kTrainingStateCopies)});
  // GPTConfig::activation_bytes_per_sequence: what the step keeps for the backward, per sequence, by memory flag.
  t.add_row({"activations per sequence, fp32", std::string("T=") + std::to_string(seq_len) + ", estimated on " +
                                                   (cuda ? "CUDA" : "a CPU") + " (model/config.cpp)"});
  const double none = variants.front().second.activation_bytes_per_sequence(seq_len, 4, cuda);
  for (const auto& [label, v] : variants) {
    const double bytes = v.activation_bytes_per_sequence(seq_len, 4, cuda);
    const double extra = v.hardware_flops_per_token(seq_len) / flops - 1;
    t.add_row({"  " + label, gib(bytes) + (label == "none" ? "" : " (" + fixed(bytes / none, 2) + "x)") +
                                 (extra > 0 ? ", +" + fixed(100 * extra, 0) + "% FLOPs recomputed" : "")});
  }
  return t.str();
}

}  // namespace stepwise::ablations
