#include "policies/literal_rules.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "policies/starlark/error.h"
#include "policies/starlark/lexer.h"
#include "policies/starlark/value.h"

namespace codexd::policy {
namespace {

using starlark::CallArgs;
using starlark::Heap;
using starlark::Value;

// Past this size the evaluator's step and heap budgets could decide the outcome, so such
// files always take the evaluator (a 10,000-rule file is about 0.7 MiB).
constexpr size_t kMaxLiteralFileBytes = 2u << 20;
// Pattern alternatives nest two deep; anything deeper is left to the evaluator.
constexpr int kMaxListDepth = 3;
constexpr size_t kHeapBytesPerCall = 64u << 20;

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

bool is_parameter_name(std::string_view name) {
  static constexpr std::string_view kNames[] = {"pattern", "decision",  "match", "not_match", "justification",
                                                "canonical_matching", "name", "paths", "host", "protocol"};
  for (std::string_view known : kNames) {
    if (name == known) return true;
  }
  return false;
}

// Reads the file once, front to back. Every method returns false to decline the file.
class LiteralRulesReader {
 public:
  LiteralRulesReader(const std::shared_ptr<const starlark::SourceFile>& source, FileDeclarations* out)
      : source_(source), text_(source->text()), out_(out) {}

  bool read() {
    while (pos_ < text_.size()) {
      if (!skip_blank_or_comment_line()) {
        if (!statement()) return false;
      }
    }
    return true;
  }

 private:
  // Skips one line holding only spaces and maybe a comment. False (nothing consumed) when the
  // line starts a statement at column 0.
  bool skip_blank_or_comment_line() {
    size_t i = pos_;
    while (i < text_.size() && text_[i] == ' ') ++i;
    if (i < text_.size() && text_[i] == '#') {
      while (i < text_.size() && text_[i] != '\n') ++i;
    }
    if (i < text_.size() && text_[i] != '\n') return false;
    pos_ = i < text_.size() ? i + 1 : i;
    return true;
  }

  // NAME(args) [# comment] at column 0, ending its line.
  bool statement() {
    const size_t call_begin = pos_;
    std::string_view name = identifier();
    if (name.empty()) return false;
    skip_spaces();
    if (!consume('(')) return false;
    CallArgs args;
    args.named.reserve(4);
    heap_.clear();  // each call has its own budget, as before; the objects' bookkeeping is reused
    if (!arguments(heap_, args)) return false;
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    }
    if (pos_ < text_.size() && !consume('\n')) return false;
    return call(name, call_begin, args);
  }

  bool call(std::string_view name, size_t call_begin, CallArgs& args) {
    starlark::LineCol at = source_->position(static_cast<uint32_t>(call_begin));
    const std::string line = std::to_string(at.line), column = std::to_string(at.column);
    std::string location;
    location.reserve(source_->name().size() + line.size() + column.size() + 2);
    location.append(source_->name()).append(1, ':').append(line).append(1, ':').append(column);
    try {
      return call_rule_builtin(name, location, args, out_);
    } catch (const starlark::NativeError&) {
      return false;  // the evaluator reports it, with its traceback and snippet
    }
  }

  // After '(': [NAME=]value, ... [,] ')'. Positional after named or a repeated name declines,
  // as the parser rejects both.
  bool arguments(Heap& heap, CallArgs& args) {
    while (true) {
      skip_layout();
      if (consume(')')) return true;
      size_t save = pos_;
      std::string_view name = identifier();
      if (!name.empty() && is_parameter_name(name)) {
        skip_layout();
        if (!consume('=') || (pos_ < text_.size() && text_[pos_] == '=')) return false;
        for (const auto& [other, unused] : args.named) {
          if (other == name) return false;
        }
        Value v;
        if (!value(heap, 0, &v)) return false;
        args.named.emplace_back(std::string(name), v);
      } else {
        pos_ = save;
        Value v;
        if (!args.named.empty() || !value(heap, 0, &v)) return false;
        args.positional.push_back(v);
      }
      skip_layout();
      if (consume(')')) return true;
      if (!consume(',')) return false;
    }
  }

  // A string literal, a list of values, True or False.
  bool value(Heap& heap, int depth, Value* out) {
    skip_layout();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '"' || c == '\'') return string_literal(heap, out);
    if (c == '[') return list(heap, depth + 1, out);
    std::string_view word = identifier();
    if (word == "True" || word == "False") {
      *out = Value::boolean(word == "True");
      return true;
    }
    return false;
  }

  bool list(Heap& heap, int depth, Value* out) {
    if (depth > kMaxListDepth) return false;
    ++pos_;  // '['
    std::vector<Value> items;
    items.reserve(4);  // one allocation for the usual short pattern or alternatives
    while (true) {
      skip_layout();
      if (consume(']')) break;
      Value item;
      if (!value(heap, depth, &item)) return false;
      items.push_back(item);
      skip_layout();
      if (consume(']')) break;
      if (!consume(',')) return false;
    }
    *out = heap.list(std::move(items));
    return true;
  }

  // A plain (unprefixed, single-line, not triple-quoted) string, decoded as the lexer does.
  bool string_literal(Heap& heap, Value* out) {
    const char quote = text_[pos_];
    if (pos_ + 2 < text_.size() && text_[pos_ + 1] == quote && text_[pos_ + 2] == quote) return false;
    const size_t body_begin = pos_ + 1;
    size_t i = body_begin;
    bool escaped = false;
    while (true) {
      if (i >= text_.size() || text_[i] == '\n') return false;
      if (text_[i] == quote) break;
      if (text_[i] == '\\') {
        escaped = true;
        i += 2;
      } else {
        ++i;
      }
    }
    pos_ = i + 1;
    if (!escaped) {
      *out = heap.string(std::string(text_.substr(body_begin, i - body_begin)));
      return true;
    }
    try {
      *out = heap.string(starlark::decode_string_body(source_, static_cast<uint32_t>(body_begin), static_cast<uint32_t>(i)));
    } catch (const starlark::Error&) {
      return false;
    }
    return true;
  }

  // An identifier not followed by a quote (that would be a prefixed string); empty otherwise.
  std::string_view identifier() {
    if (pos_ >= text_.size() || !is_ident_start(text_[pos_])) return {};
    size_t begin = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) return {};
    return text_.substr(begin, pos_ - begin);
  }

  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }

  // Inside brackets: spaces, newlines and comments.
  void skip_layout() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\n') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  bool consume(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  const std::shared_ptr<const starlark::SourceFile>& source_;
  Heap heap_{kHeapBytesPerCall};
  std::string_view text_;
  size_t pos_ = 0;
  FileDeclarations* out_;
};

}  // namespace

bool read_literal_rules(const std::shared_ptr<const starlark::SourceFile>& source, FileDeclarations* out) {
  if (source->text().size() > kMaxLiteralFileBytes) return false;
  // About one call per line: the calls' vector is sized once, not doubled (and moved) ~14 times.
  const std::string& text = source->text();
  out->calls.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  return LiteralRulesReader(source, out).read();
}

}  // namespace codexd::policy
