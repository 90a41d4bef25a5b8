#include "tests/macos/sbpl_reader.h"

#include <cctype>

namespace codexd::sandbox::macos_backend::testing {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  SbplReadResult read_all() {
    SbplReadResult result;
    while (true) {
      skip_space();
      if (pos_ >= text_.size()) break;
      if (text_[pos_] != '(') return fail("top-level text that is not a list");
      SbplNode node;
      if (!read_node(&node)) return fail(error_);
      result.forms.push_back(std::move(node));
    }
    return result;
  }

 private:
  SbplReadResult fail(const std::string& message) {
    SbplReadResult result;
    result.error = message + " at offset " + std::to_string(pos_);
    return result;
  }

  void skip_space() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ';') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else {
        return;
      }
    }
  }

  bool read_string(SbplNode* node, bool raw) {
    ++pos_;  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
        if (raw) node->text += '\\';
        ++pos_;
      }
      node->text += text_[pos_++];
    }
    if (pos_ >= text_.size()) {
      error_ = "unterminated string";
      return false;
    }
    ++pos_;  // closing quote
    return true;
  }

  bool read_node(SbplNode* node) {
    skip_space();
    if (pos_ >= text_.size()) {
      error_ = "unexpected end of text";
      return false;
    }
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      node->kind = SbplNode::Kind::kList;
      while (true) {
        skip_space();
        if (pos_ >= text_.size()) {
          error_ = "unbalanced '('";
          return false;
        }
        if (text_[pos_] == ')') {
          ++pos_;
          return true;
        }
        SbplNode child;
        if (!read_node(&child)) return false;
        node->children.push_back(std::move(child));
      }
    }
    if (c == ')') {
      error_ = "unexpected ')'";
      return false;
    }
    if (c == '"') {
      node->kind = SbplNode::Kind::kString;
      return read_string(node, false);
    }
    if (c == '#' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
      ++pos_;
      node->kind = SbplNode::Kind::kRegex;
      return read_string(node, true);
    }
    node->kind = SbplNode::Kind::kSymbol;
    while (pos_ < text_.size()) {
      char s = text_[pos_];
      if (std::isspace(static_cast<unsigned char>(s)) || s == '(' || s == ')' || s == '"' || s == ';') break;
      node->text += s;
      ++pos_;
    }
    return true;
  }

  const std::string& text_;
  size_t pos_ = 0;
  std::string error_;
};

void collect_params(const SbplNode& node, std::vector<std::string>* out) {
  if (node.kind != SbplNode::Kind::kList) return;
  if (node.head() == "param" && node.children.size() == 2 &&
      node.children[1].kind == SbplNode::Kind::kString) {
    out->push_back(node.children[1].text);
    return;
  }
  for (const SbplNode& child : node.children) collect_params(child, out);
}

}  // namespace

std::string SbplNode::head() const {
  if (kind != Kind::kList || children.empty() || children[0].kind != Kind::kSymbol) return "";
  return children[0].text;
}

SbplReadResult read_sbpl(const std::string& text) { return Reader(text).read_all(); }

std::vector<std::string> referenced_params(const std::vector<SbplNode>& forms) {
  std::vector<std::string> out;
  for (const SbplNode& form : forms) collect_params(form, &out);
  return out;
}

}  // namespace codexd::sandbox::macos_backend::testing
