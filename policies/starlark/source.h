// A loaded source file and positions in it. Spans are byte offsets; line/column are computed
// only when an error is rendered (columns count code points, as Codex's reports do).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace codexd::starlark {

struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
};

struct LineCol {
  uint32_t line = 1;    // 1-based
  uint32_t column = 1;  // 1-based, in code points
};

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  LineCol position(uint32_t offset) const;
  // The text of a 1-based line, without its newline.
  std::string_view line_text(uint32_t line) const;
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }

 private:
  std::string name_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

}  // namespace codexd::starlark
