#include "policies/check_json.h"

#include <cstdio>

namespace codexd::policy {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

// Minimal serde_json-style writer: objects and arrays with compact or pretty layout.
class Writer {
 public:
  explicit Writer(bool pretty) : pretty_(pretty) {}

  void begin(char open) {
    value_prefix();
    out_ += open;
    ++depth_;
    first_ = true;
  }
  void end(char close) {
    --depth_;
    if (!first_ && pretty_) newline();
    out_ += close;
    first_ = false;
  }
  void key(const std::string& k) {
    separator();
    out_ += json_quote(k);
    out_ += pretty_ ? ": " : ":";
    after_key_ = true;
  }
  void string(const std::string& s) {
    value_prefix();
    out_ += json_quote(s);
    first_ = false;
  }
  std::string take() { return std::move(out_); }

 private:
  void newline() {
    out_ += '\n';
    out_.append(static_cast<size_t>(depth_) * 2, ' ');
  }
  void separator() {
    if (!first_) out_ += ',';
    if (pretty_) newline();
    first_ = false;
  }
  void value_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (depth_ > 0) separator();
  }

  bool pretty_;
  std::string out_;
  int depth_ = 0;
  bool first_ = true;
  bool after_key_ = false;
};

}  // namespace

std::string evaluation_to_json(const Evaluation& evaluation, bool pretty) {
  Writer w(pretty);
  w.begin('{');
  w.key("matchedRules");
  w.begin('[');
  for (const RuleMatch& m : evaluation.matched_rules) {
    w.begin('{');
    if (m.heuristic) {
      w.key("heuristicsRuleMatch");
      w.begin('{');
      w.key("command");
      w.begin('[');
      for (const std::string& t : m.matched_prefix) w.string(t);
      w.end(']');
      w.key("decision");
      w.string(std::string(decision_name(m.decision)));
      w.end('}');
    } else {
      w.key("prefixRuleMatch");
      w.begin('{');
      w.key("matchedPrefix");
      w.begin('[');
      for (const std::string& t : m.matched_prefix) w.string(t);
      w.end(']');
      w.key("decision");
      w.string(std::string(decision_name(m.decision)));
      if (m.resolved_program) {
        w.key("resolvedProgram");
        w.string(*m.resolved_program);
      }
      if (m.justification) {
        w.key("justification");
        w.string(*m.justification);
      }
      w.end('}');
    }
    w.end('}');
  }
  w.end(']');
  if (evaluation.decision) {
    w.key("decision");
    w.string(std::string(decision_name(*evaluation.decision)));
  }
  w.end('}');
  return w.take();
}

}  // namespace codexd::policy
