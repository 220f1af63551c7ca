// Where the checkout is at run time. The build bakes its own source path in, but a prebuilt binary
// (scripts/prebuilt.py) runs from deps/ in another checkout on another machine, where that path does not exist, and
// the suites, the Python step, the results folder and the bundled libraries are found from here instead.
#pragma once

#include <filesystem>

namespace stepwise::bench {

// $STEPWISE_SOURCE_DIR when set; else the tree this binary was built from, if it is still there; else the nearest
// folder above the binary that holds ablations/suites (deps/prebuilt/bin/ablate -> the checkout); else the built-in
// path as it is. Found once per process.
const std::filesystem::path& source_dir();
// The same search, done again (what source_dir() did at its first call).
std::filesystem::path locate_source_dir();

}  // namespace stepwise::bench
