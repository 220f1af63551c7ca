// Out of memory is an expected outcome (the max_batch probe looks for it), so it must be recognised from either
// allocator's exception and reported in one line, without c10's backtrace.
#include "bench/oom.h"

#include <c10/util/Exception.h>

#include <new>

namespace stepwise::bench {

bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e) || dynamic_cast<const std::bad_alloc*>(&e)) return true;
  // The CPU allocator raises a plain c10::Error; cuBLAS and cuDNN report their own workspace failures.
  const std::string what = short_message(e);
  return what.find("can't allocate memory") != std::string::npos || what.find("out of memory") != std::string::npos ||
         what.find("ALLOC_FAILED") != std::string::npos;
}

std::string short_message(const std::exception& e) {
  std::string what;
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    what = c10_error->what_without_backtrace();
  else
    what = e.what();
  const auto newline = what.find('\n');
  return newline == std::string::npos ? what : what.substr(0, newline);
}

}  // namespace stepwise::bench
