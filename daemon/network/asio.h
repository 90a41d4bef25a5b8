// The Asio and Beast pieces the proxy engine uses, and its short names. <utility> first:
// Boost 1.74's awaitable.hpp uses std::exchange without including it.
#pragma once

#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace codexd::network {

namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
using error_code = boost::system::error_code;
using Strand = asio::strand<asio::io_context::executor_type>;

// co_await op(..., into(ec)): errors as values, never an exception out of a coroutine.
inline auto into(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

}  // namespace codexd::network
