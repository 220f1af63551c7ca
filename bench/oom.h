// Recognising out-of-memory errors (CUDA caching allocator or CPU allocator) and shortening torch's messages.
#pragma once

#include <exception>
#include <string>

namespace stepwise::bench {

bool is_out_of_memory(const std::exception& e);
// The first line of the message, without c10's backtrace.
std::string short_message(const std::exception& e);

}  // namespace stepwise::bench
