// log_format = "json": one JSON object per line, built as JSON (not a pattern string that
// pastes the message between quotes), so every message, whatever it holds (a rules file
// named with a `"`, a control character, invalid UTF-8), is one line that parses:
//   {"ts":"2026-12-07T02:55:00.123+00:00","level":"info","pid":42,"msg":"..."}
#pragma once

#include <spdlog/formatter.h>

#include <memory>

namespace codexd::server {

std::unique_ptr<spdlog::formatter> make_json_log_formatter();

}  // namespace codexd::server
