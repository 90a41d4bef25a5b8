#include "platform/sandbox/exec_relay.h"

#include <cstring>

namespace codexd::sandbox {
namespace {

constexpr std::string_view kRecordMagic = "cxr1";
constexpr std::string_view kVerdictMagic = "cxv1";

enum Flags : uint8_t { kReadable = 1, kTruncated = 2, kByDescriptor = 4 };

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void put_text(std::string& out, std::string_view text) {
  put<uint32_t>(out, static_cast<uint32_t>(text.size()));
  out.append(text);
}

// Reads fixed-size values and length-prefixed texts off the front of a message.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  template <typename T>
  bool take(T* value) {
    if (rest_.size() < sizeof *value) return false;
    std::memcpy(value, rest_.data(), sizeof *value);
    rest_.remove_prefix(sizeof *value);
    return true;
  }
  bool take_text(std::string* text, size_t limit) {
    uint32_t size = 0;
    if (!take(&size) || size > limit || size > rest_.size()) return false;
    text->assign(rest_.substr(0, size));
    rest_.remove_prefix(size);
    return true;
  }
  bool take_magic(std::string_view magic) {
    if (rest_.substr(0, magic.size()) != magic) return false;
    rest_.remove_prefix(magic.size());
    return true;
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace

std::string encode_exec_record(const ExecRecord& record) {
  std::string out(kRecordMagic);
  put<uint64_t>(out, record.id);
  put<uint8_t>(out, static_cast<uint8_t>((record.readable ? kReadable : 0) | (record.argv_truncated ? kTruncated : 0) |
                                         (record.by_descriptor ? kByDescriptor : 0)));
  put_text(out, record.path);
  put_text(out, record.cwd);
  put<uint32_t>(out, static_cast<uint32_t>(record.argv.size()));
  for (const std::string& word : record.argv) put_text(out, word);
  return out;
}

Result<ExecRecord> parse_exec_record(std::string_view bytes) {
  if (bytes.size() > kMaxRecordBytes) return InvalidArgument("exec record larger than " + std::to_string(kMaxRecordBytes) + " bytes");
  Reader in(bytes);
  ExecRecord record;
  uint8_t flags = 0;
  uint32_t argc = 0;
  if (!in.take_magic(kRecordMagic) || !in.take(&record.id) || !in.take(&flags)) {
    return InvalidArgument("exec record: bad header");
  }
  if ((flags & ~(kReadable | kTruncated | kByDescriptor)) != 0) return InvalidArgument("exec record: unknown flags");
  record.readable = (flags & kReadable) != 0;
  record.argv_truncated = (flags & kTruncated) != 0;
  record.by_descriptor = (flags & kByDescriptor) != 0;
  if (!in.take_text(&record.path, kMaxRecordPath) || !in.take_text(&record.cwd, kMaxRecordPath)) {
    return InvalidArgument("exec record: bad path or cwd");
  }
  if (!in.take(&argc) || argc > kMaxRecordArgs) return InvalidArgument("exec record: bad argument count");
  size_t bytes_left = kMaxRecordArgBytes;
  record.argv.reserve(argc);
  for (uint32_t i = 0; i < argc; ++i) {
    std::string word;
    if (!in.take_text(&word, bytes_left)) return InvalidArgument("exec record: bad argument " + std::to_string(i));
    bytes_left -= word.size();
    record.argv.push_back(std::move(word));
  }
  if (!in.done()) return InvalidArgument("exec record: trailing bytes");
  return record;
}

std::string encode_exec_verdict(const ExecVerdict& verdict) {
  std::string out(kVerdictMagic);
  put<uint64_t>(out, verdict.id);
  put<uint8_t>(out, verdict.allow ? 1 : 0);
  return out;
}

Result<ExecVerdict> parse_exec_verdict(std::string_view bytes) {
  Reader in(bytes);
  ExecVerdict verdict;
  uint8_t allow = 0;
  if (!in.take_magic(kVerdictMagic) || !in.take(&verdict.id) || !in.take(&allow) || allow > 1 || !in.done()) {
    return InvalidArgument("exec verdict: malformed");
  }
  verdict.allow = allow == 1;
  return verdict;
}

}  // namespace codexd::sandbox
