// The exec relay's messages (platform/sandbox/exec_relay.h) on arbitrary bytes: what a keeper
// inside a sandbox sends the daemon. Never a crash; whatever parses stays within the bounds
// and encodes back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "platform/sandbox/exec_relay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace codexd::sandbox;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  codexd::Result<ExecRecord> record = parse_exec_record(bytes);
  if (record.ok()) {
    if (record->path.size() > kMaxRecordPath || record->cwd.size() > kMaxRecordPath) __builtin_trap();
    if (record->argv.size() > kMaxRecordArgs) __builtin_trap();
    if (encode_exec_record(*record) != bytes) __builtin_trap();
  }
  codexd::Result<ExecVerdict> verdict = parse_exec_verdict(bytes);
  if (verdict.ok() && encode_exec_verdict(*verdict) != bytes) __builtin_trap();
  return 0;
}
