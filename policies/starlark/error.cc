#include "policies/starlark/error.h"

#include <algorithm>

namespace codexd::starlark {
namespace {

size_t count_code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string_view trim_left(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// Codex prints the message, an arrow to the location and the source line with carets
// (annotate-snippets style). Multi-line spans are shown on their first line.
std::string render_snippet(const Error& e) {
  std::string out = "error: " + e.message + "\n";
  if (!e.source) return out;
  const SourceFile& src = *e.source;
  LineCol begin = src.position(e.span.begin);
  LineCol end = src.position(e.span.end);
  std::string line_no = std::to_string(begin.line);
  std::string gutter(line_no.size(), ' ');
  out += gutter + "--> " + src.name() + ":" + line_no + ":" + std::to_string(begin.column) + "\n";
  out += gutter + " |\n";
  std::string_view text = src.line_text(begin.line);
  out += line_no + " | " + std::string(text) + "\n";
  size_t line_len = count_code_points(text);
  size_t carets = 1;
  if (end.line == begin.line && end.column > begin.column) {
    carets = end.column - begin.column;
  } else if (end.line > begin.line && line_len + 1 > begin.column) {
    carets = line_len + 1 - begin.column;
  }
  out += gutter + " | " + std::string(begin.column - 1, ' ') + std::string(carets, '^') + "\n";
  out += gutter + " |\n";
  return out;
}

}  // namespace

std::string Error::located_message() const {
  if (!source) return message;
  LineCol pos = source->position(span.begin);
  return source->name() + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column) + ": " + message;
}

std::string Error::codex_report() const {
  std::string out = "starlark error: ";
  if (!traceback.empty() && source) {
    out += "Traceback (most recent call last):\n";
    for (const CallFrame& frame : traceback) {
      LineCol pos = source->position(frame.call_site.begin);
      out += "  * " + source->name() + ":" + std::to_string(pos.line) + ", in " + frame.caller_name + "\n";
      out += "      " + std::string(trim_left(source->line_text(pos.line))) + "\n";
    }
  }
  out += render_snippet(*this);
  return out;
}

}  // namespace codexd::starlark
