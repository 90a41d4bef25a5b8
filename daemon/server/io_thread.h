// The loop of every daemon thread that runs an io_context until it is stopped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <exception>
#include <spdlog/spdlog.h>

namespace codexd::server {

// Exceptions never cross the thread: a handler that throws is logged, and serving goes on.
inline void run_until_stopped(boost::asio::io_context& io, const char* thread_name) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      spdlog::critical("{} thread: unexpected exception: {}", thread_name, e.what());
    }
  }
}

}  // namespace codexd::server
