// libprotobuf logs to stderr on its own, e.g. "[libprotobuf ERROR ...] String field ...
// contains invalid UTF-8 data when parsing a protocol buffer" for every such request: any
// client could fill the daemon's log. Its lines go to spdlog at debug level instead, at most
// one a second (a FATAL one at critical: protobuf aborts after it).
#pragma once

namespace codexd::server {

// Installs the handler; call once, before serving.
void route_protobuf_log_to_spdlog();

// gRPC core logs to stderr on its own as well ("E1207 ... chttp2_transport.cc:...] ..."): a
// client that sends garbage can make it write, and its lines would break log_format = "json".
// They go to spdlog too: errors at warn, the rest at debug, each at most once a second.
void route_grpc_log_to_spdlog();

}  // namespace codexd::server
