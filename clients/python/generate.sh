#!/bin/sh
# Generates the Python messages and gRPC stubs of codexd.v1 from proto/ into OUT (default:
# ./generated). The stubs import `codexd.v1.*_pb2`, so OUT is what goes on sys.path (the build
# puts it in build/clients/python; the package ships it as the `codexd.v1` modules).
# Needs protoc and grpc_python_plugin (Debian: protobuf-compiler, protobuf-compiler-grpc).
# Not python3-grpc-tools: its bundled protoc predates proto3 `optional`, which the protos use.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proto_dir=$(cd "$here/../../proto" && pwd)
out=${1:-$here/generated}
plugin=${GRPC_PYTHON_PLUGIN:-$(command -v grpc_python_plugin)}
mkdir -p "$out"
protoc -I "$proto_dir" --python_out="$out" --grpc_python_out="$out" \
  --plugin=protoc-gen-grpc_python="$plugin" "$proto_dir"/codexd/v1/*.proto
