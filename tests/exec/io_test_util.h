// Drives an io_context until a condition holds (a hang guard, not a timing assertion).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>

namespace codexd::testing_util {

inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::seconds guard = std::chrono::seconds(30)) {
  auto limit = std::chrono::steady_clock::now() + guard;
  while (!done()) {
    if (std::chrono::steady_clock::now() > limit) return false;
    io.restart();
    io.run_one_for(std::chrono::milliseconds(100));
  }
  return true;
}

}  // namespace codexd::testing_util
