// libprotobuf logs to stderr on its own, e.g. "[libprotobuf ERROR ...] String field ...
// contains invalid UTF-8 data when parsing a protocol buffer" for every such request: any
// client could fill the daemon's log. Its lines go to spdlog at debug level instead, at most
// one a second (a FATAL one at critical: protobuf aborts after it).
#pragma once

namespace codexd::server {

// Installs the handler; call once, before serving.
void route_protobuf_log_to_spdlog();

}  // namespace codexd::server
