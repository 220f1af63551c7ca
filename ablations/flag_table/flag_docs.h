// The docs' tables, generated from the flag table as --list-flags is: the README's table of what each flag switches
// and docs/flags.md's table of the flags' options. ./ablate --list-flags --markdown prints both, and
// tests/ablations/flag_table/flag_docs_test.cpp holds the README and docs/flags.md to them, so neither is a copy kept
// by hand.
#pragma once

#include <string>

namespace stepwise::ablations {

// | flag | on: what it switches to | off: the reference | applies |, one row per flag in table order.
std::string flags_markdown();
// | option | flag | values | default | suite file | what it changes |, one row per option in table order.
std::string flag_options_markdown();
// Both, each under a line saying where it goes.
std::string list_flags_markdown();

}  // namespace stepwise::ablations
