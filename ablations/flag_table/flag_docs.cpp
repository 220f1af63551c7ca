// The README's flag table and docs/flags.md's option table, as Markdown, from the flags' declarations.
#include "ablations/flag_table/flag_docs.h"

#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {

namespace {

std::string code(std::string_view s) { return "`" + std::string(s) + "`"; }

std::string values_of(const FlagOption& o) {
  if (o.choices.empty()) return o.values;
  std::string out;
  for (const auto& c : o.choices) out += (out.empty() ? "" : ", ") + code(c);
  return out;
}

}  // namespace

std::string flags_markdown() {
  std::string out = "| flag | on: what it switches to | off: the reference | applies |\n|---|---|---|---|\n";
  for (const auto* f : flag_table())
    out += "| " + code(f->name) + " | " + std::string(f->summary) + " | " + std::string(f->reference) + " | " +
           to_string(f->applies) + " |\n";
  return out;
}

std::string flag_options_markdown() {
  std::string out = "| option | flag | values | default | suite file | what it changes |\n|---|---|---|---|---|---|\n";
  for (const auto* f : flag_table())
    for (const auto& o : f->options)
      out += "| " + code(o.cli_name()) + " | " + code(f->name) + " | " + values_of(o) + " | " +
             (o.choices.empty() ? o.default_help : code(o.default_help)) + " | " + (o.in_suites ? code(o.name) : "no") +
             " | " + o.help + " |\n";
  return out;
}

std::string list_flags_markdown() {
  return "<!-- README.md, \"The flags\" -->\n" + flags_markdown() +
         "\n<!-- docs/flags.md, \"Options that say how a "
         "flag acts\" -->\n" +
         flag_options_markdown();
}

}  // namespace stepwise::ablations
