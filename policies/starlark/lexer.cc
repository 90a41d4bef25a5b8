#include "policies/starlark/lexer.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "policies/starlark/utf8.h"

namespace codexd::starlark {
namespace {

const std::unordered_map<std::string_view, Tok>& keywords() {
  static const auto* map = new std::unordered_map<std::string_view, Tok>{
      {"and", Tok::kAnd},   {"break", Tok::kBreak}, {"continue", Tok::kContinue}, {"def", Tok::kDef},
      {"elif", Tok::kElif}, {"else", Tok::kElse},   {"for", Tok::kFor},           {"if", Tok::kIf},
      {"in", Tok::kIn},     {"lambda", Tok::kLambda}, {"load", Tok::kLoad},       {"not", Tok::kNot},
      {"or", Tok::kOr},     {"pass", Tok::kPass},   {"return", Tok::kReturn},
  };
  return *map;
}

bool is_reserved(std::string_view word) {
  static const char* const kReserved[] = {"as",      "assert", "async",  "await", "class",    "del",
                                          "except",  "finally", "from",  "global", "import",  "is",
                                          "nonlocal", "raise", "try",    "while", "with",     "yield"};
  for (const char* r : kReserved) {
    if (word == r) return true;
  }
  return false;
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::shared_ptr<const SourceFile> source, uint32_t begin, uint32_t end, bool expression_only)
      : source_(std::move(source)), text_(source_->text()), pos_(begin), end_(end), expression_only_(expression_only) {}

  std::vector<Token> run() {
    // Rules files run about one token per 3-4 bytes; growing the vector by doubling instead
    // cost a third of a 10,000-rule load in copies and page faults (measured with perf).
    tokens_.reserve((end_ - pos_) / 4 + 16);
    indents_.push_back(0);
    at_line_start_ = !expression_only_;
    while (true) {
      if (at_line_start_ && depth_ == 0) {
        handle_indentation();
        if (pos_ >= end_) break;
      }
      if (pos_ >= end_) break;
      char c = text_[pos_];
      if (c == ' ' || c == '\f') {
        ++pos_;
      } else if (c == '\t') {
        fail_at(pos_, pos_ + 1, "tabs are not allowed");
      } else if (c == '#') {
        while (pos_ < end_ && text_[pos_] != '\n') ++pos_;
      } else if (c == '\\' && pos_ + 1 < end_ && text_[pos_ + 1] == '\n') {
        pos_ += 2;
      } else if (c == '\n') {
        if (depth_ == 0 && !expression_only_) {
          if (!tokens_.empty() && tokens_.back().kind != Tok::kNewline) emit(Tok::kNewline, pos_, pos_ + 1);
          at_line_start_ = true;
        }
        ++pos_;
      } else {
        lex_token();
      }
    }
    if (!expression_only_) {
      if (!tokens_.empty() && tokens_.back().kind != Tok::kNewline) emit(Tok::kNewline, end_, end_);
      while (indents_.size() > 1) {
        indents_.pop_back();
        emit(Tok::kDedent, end_, end_);
      }
    }
    emit(Tok::kEof, end_, end_);
    return std::move(tokens_);
  }

  // Decodes escapes in [begin, end) of a non-raw string body.
  std::string decode(uint32_t begin, uint32_t end) {
    std::string out;
    uint32_t i = begin;
    while (i < end) {
      char c = text_[i];
      if (c != '\\' || i + 1 >= end) {
        out += c;
        ++i;
        continue;
      }
      uint32_t esc = i + 1;
      char e = text_[esc];
      i = esc + 1;
      switch (e) {
        case '\n': break;  // line continuation inside a string
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '"': out += '"'; break;
        case '\'': out += '\''; break;
        case '\\': out += '\\'; break;
        case 'x': {
          int h1 = i < end ? hex_value(text_[i]) : -1;
          int h2 = i + 1 < end ? hex_value(text_[i + 1]) : -1;
          if (h1 < 0 || h2 < 0) bad_escape(esc, std::min(end + 1, esc + 4));
          append_utf8(out, static_cast<uint32_t>(h1 * 16 + h2));
          i += 2;
          break;
        }
        case 'u':
        case 'U': {
          uint32_t digits = e == 'u' ? 4 : 8;
          uint32_t value = 0;
          for (uint32_t k = 0; k < digits; ++k) {
            int h = i + k < end ? hex_value(text_[i + k]) : -1;
            if (h < 0) bad_escape(esc, std::min(end, esc + 1 + digits));
            value = value * 16 + static_cast<uint32_t>(h);
          }
          if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) bad_escape(esc, esc + 1 + digits);
          append_utf8(out, value);
          i += digits;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t value = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && i < end && text_[i] >= '0' && text_[i] <= '7'; ++k, ++i) {
              value = value * 8 + static_cast<uint32_t>(text_[i] - '0');
            }
            append_utf8(out, value);
          } else {
            // Unknown escapes are kept verbatim (Codex keeps "\q" as two characters).
            out += '\\';
            i = esc;
          }
      }
    }
    return out;
  }

 private:
  [[noreturn]] void fail_at(uint32_t begin, uint32_t end, const std::string& message) {
    Error error;
    error.kind = ErrorKind::kParse;
    error.message = "Parse error: " + message;
    error.span = {begin, end};
    error.source = source_;
    throw error;
  }

  [[noreturn]] void bad_escape(uint32_t begin, uint32_t end) {
    fail_at(begin, end, "invalid string escape sequence `" + std::string(text_.substr(begin + 1, end - begin - 1)) + "`");
  }

  void emit(Tok kind, uint32_t begin, uint32_t end) {
    Token t;
    t.kind = kind;
    t.span = {begin, end};
    tokens_.push_back(std::move(t));
  }

  // At the start of a logical line: measure its indentation and emit INDENT/DEDENT.
  // Blank and comment-only lines do not count.
  void handle_indentation() {
    while (pos_ < end_) {
      uint32_t line_begin = pos_;
      uint32_t width = 0;
      while (pos_ < end_ && (text_[pos_] == ' ' || text_[pos_] == '\f' || text_[pos_] == '\t')) {
        if (text_[pos_] == '\t') fail_at(pos_ > 0 ? pos_ - 1 : pos_, pos_, "tabs are not allowed");
        ++width;
        ++pos_;
      }
      if (pos_ >= end_) return;
      char c = text_[pos_];
      if (c == '\n') {
        ++pos_;
        continue;
      }
      if (c == '#') {
        while (pos_ < end_ && text_[pos_] != '\n') ++pos_;
        continue;
      }
      if (c == '\\' && pos_ + 1 < end_ && text_[pos_ + 1] == '\n') {
        // A continuation right at the indentation: treat the joined line as this line.
        pos_ += 2;
        continue;
      }
      at_line_start_ = false;
      if (width > indents_.back()) {
        indents_.push_back(width);
        emit(Tok::kIndent, line_begin, pos_);
      } else {
        while (width < indents_.back()) {
          indents_.pop_back();
          emit(Tok::kDedent, pos_, pos_);
        }
        if (width != indents_.back()) fail_at(line_begin, pos_, "unindent does not match any outer indentation level");
      }
      return;
    }
  }

  void lex_token() {
    char c = text_[pos_];
    if (is_ident_start(c)) {
      if (try_string_with_prefix()) return;
      uint32_t begin = pos_;
      while (pos_ < end_ && is_ident_char(text_[pos_])) ++pos_;
      std::string_view word = text_.substr(begin, pos_ - begin);
      auto it = keywords().find(word);
      if (it != keywords().end()) {
        emit(it->second, begin, pos_);
        return;
      }
      if (is_reserved(word)) fail_at(begin, pos_, "cannot use reserved keyword `" + std::string(word) + "`");
      emit(Tok::kIdent, begin, pos_);
      tokens_.back().text = std::string(word);
      return;
    }
    if (is_digit(c) || (c == '.' && pos_ + 1 < end_ && is_digit(text_[pos_ + 1]))) {
      lex_number();
      return;
    }
    if (c == '"' || c == '\'') {
      lex_string(pos_, pos_, /*raw=*/false, Tok::kString);
      return;
    }
    lex_punctuation();
  }

  bool try_string_with_prefix() {
    static const char* const kPrefixes[] = {"rb", "br", "fr", "rf", "r", "f", "b"};
    for (const char* prefix : kPrefixes) {
      size_t n = std::strlen(prefix);
      if (pos_ + n < end_ && text_.compare(pos_, n, prefix) == 0 && (text_[pos_ + n] == '"' || text_[pos_ + n] == '\'')) {
        bool raw = std::strchr(prefix, 'r') != nullptr;
        Tok kind = std::strchr(prefix, 'f') ? Tok::kFString : std::strchr(prefix, 'b') ? Tok::kBytes : Tok::kString;
        lex_string(pos_, static_cast<uint32_t>(pos_ + n), raw, kind);
        return true;
      }
    }
    return false;
  }

  void lex_string(uint32_t token_begin, uint32_t quote_pos, bool raw, Tok kind) {
    char quote = text_[quote_pos];
    bool triple = quote_pos + 2 < end_ && text_[quote_pos + 1] == quote && text_[quote_pos + 2] == quote;
    uint32_t body_begin = quote_pos + (triple ? 3 : 1);
    uint32_t i = body_begin;
    uint32_t body_end = 0;
    while (true) {
      if (i >= end_) fail_at(token_begin, end_, "unfinished string literal");
      char c = text_[i];
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == '\n' && !triple) fail_at(token_begin, i, "unfinished string literal");
      if (c == quote) {
        if (!triple) {
          body_end = i;
          i += 1;
          break;
        }
        if (i + 2 < end_ && text_[i + 1] == quote && text_[i + 2] == quote) {
          body_end = i;
          i += 3;
          break;
        }
      }
      ++i;
    }
    Token t;
    t.kind = kind;
    t.span = {token_begin, i};
    t.raw_string = raw;
    t.body_begin = body_begin;
    if (kind == Tok::kFString) {
      t.text = std::string(text_.substr(body_begin, body_end - body_begin));
    } else if (raw) {
      t.text = std::string(text_.substr(body_begin, body_end - body_begin));
    } else {
      t.text = decode(body_begin, body_end);
    }
    if (kind == Tok::kBytes) t.kind = Tok::kString;  // bytes literals behave as strings here
    tokens_.push_back(std::move(t));
    pos_ = i;
  }

  void lex_number() {
    uint32_t begin = pos_;
    if (text_[pos_] == '0' && pos_ + 1 < end_ && std::strchr("xXoObB", text_[pos_ + 1]) && text_[pos_ + 1] != '\0') {
      char base_char = static_cast<char>(text_[pos_ + 1] | 0x20);
      int base = base_char == 'x' ? 16 : base_char == 'o' ? 8 : 2;
      pos_ += 2;
      uint32_t digits_begin = pos_;
      while (pos_ < end_ && (is_ident_char(text_[pos_]))) ++pos_;
      parse_int(begin, digits_begin, base);
      return;
    }
    while (pos_ < end_ && is_digit(text_[pos_])) ++pos_;
    bool is_float = false;
    if (pos_ < end_ && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < end_ && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < end_ && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      uint32_t save = pos_;
      ++pos_;
      if (pos_ < end_ && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (pos_ < end_ && is_digit(text_[pos_])) {
        is_float = true;
        while (pos_ < end_ && is_digit(text_[pos_])) ++pos_;
      } else {
        pos_ = save;
      }
    }
    if (is_float) {
      std::string literal(text_.substr(begin, pos_ - begin));
      Token t;
      t.kind = Tok::kFloat;
      t.span = {begin, pos_};
      t.float_value = std::strtod(literal.c_str(), nullptr);
      tokens_.push_back(std::move(t));
      return;
    }
    if (pos_ - begin > 1 && text_[begin] == '0') {
      fail_at(begin, pos_, "integer cannot have leading 0, got `" + std::string(text_.substr(begin, pos_ - begin)) + "`");
    }
    parse_int(begin, begin, 10);
  }

  void parse_int(uint32_t begin, uint32_t digits_begin, int base) {
    uint64_t value = 0;
    if (digits_begin == pos_) fail_at(begin, pos_, "invalid integer literal");
    for (uint32_t i = digits_begin; i < pos_; ++i) {
      int d = hex_value(text_[i]);
      if (d < 0 || d >= base) fail_at(begin, pos_, "invalid integer literal `" + std::string(text_.substr(begin, pos_ - begin)) + "`");
      if (value > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
        fail_at(begin, pos_, "integer literal too large (codexd supports 64-bit integers)");
      }
      value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
    Token t;
    t.kind = Tok::kInt;
    t.span = {begin, pos_};
    t.int_value = static_cast<int64_t>(value);
    tokens_.push_back(std::move(t));
  }

  void lex_punctuation() {
    struct Punct {
      const char* text;
      Tok kind;
    };
    // Longest first.
    static const Punct kPuncts[] = {
        {"//=", Tok::kSlashSlashEq}, {"<<=", Tok::kShlEq}, {">>=", Tok::kShrEq}, {"**", Tok::kStarStar},
        {"//", Tok::kSlashSlash},    {"<<", Tok::kShl},    {">>", Tok::kShr},    {"==", Tok::kEq},
        {"!=", Tok::kNe},            {"<=", Tok::kLe},     {">=", Tok::kGe},     {"+=", Tok::kPlusEq},
        {"-=", Tok::kMinusEq},       {"*=", Tok::kStarEq}, {"/=", Tok::kSlashEq}, {"%=", Tok::kPercentEq},
        {"&=", Tok::kAmpEq},         {"|=", Tok::kPipeEq}, {"^=", Tok::kCaretEq}, {"->", Tok::kArrow},
        {"(", Tok::kLParen},         {")", Tok::kRParen},  {"[", Tok::kLBracket}, {"]", Tok::kRBracket},
        {"{", Tok::kLBrace},         {"}", Tok::kRBrace},  {",", Tok::kComma},   {":", Tok::kColon},
        {";", Tok::kSemicolon},      {".", Tok::kDot},     {"=", Tok::kAssign},  {"+", Tok::kPlus},
        {"-", Tok::kMinus},          {"*", Tok::kStar},    {"/", Tok::kSlash},   {"%", Tok::kPercent},
        {"~", Tok::kTilde},          {"&", Tok::kAmp},     {"|", Tok::kPipe},    {"^", Tok::kCaret},
        {"<", Tok::kLt},             {">", Tok::kGt},
    };
    for (const Punct& p : kPuncts) {
      size_t n = std::strlen(p.text);
      if (pos_ + n <= end_ && text_.compare(pos_, n, p.text) == 0) {
        Tok kind = p.kind;
        if (kind == Tok::kLParen || kind == Tok::kLBracket || kind == Tok::kLBrace) ++depth_;
        if ((kind == Tok::kRParen || kind == Tok::kRBracket || kind == Tok::kRBrace) && depth_ > 0) --depth_;
        emit(kind, pos_, static_cast<uint32_t>(pos_ + n));
        pos_ += static_cast<uint32_t>(n);
        return;
      }
    }
    uint32_t len = utf8_sequence_length(static_cast<unsigned char>(text_[pos_]));
    if (pos_ + len > end_) len = end_ - pos_;
    fail_at(pos_, pos_ + len, "invalid input `" + std::string(text_.substr(pos_, len)) + "`");
  }

  std::shared_ptr<const SourceFile> source_;
  std::string_view text_;
  uint32_t pos_;
  uint32_t end_;
  bool expression_only_;
  bool at_line_start_ = true;
  int depth_ = 0;
  std::vector<uint32_t> indents_;
  std::vector<Token> tokens_;

  friend std::string codexd::starlark::decode_string_body(const std::shared_ptr<const SourceFile>&, uint32_t, uint32_t);
};

}  // namespace

LexResult tokenize(std::shared_ptr<const SourceFile> source, uint32_t begin, uint32_t end, bool expression_only) {
  LexResult result;
  try {
    Lexer lexer(std::move(source), begin, end, expression_only);
    result.tokens = lexer.run();
    result.ok = true;
  } catch (Error& e) {
    result.error = std::move(e);
  }
  return result;
}

std::string decode_string_body(const std::shared_ptr<const SourceFile>& source, uint32_t begin, uint32_t end) {
  Lexer lexer(source, begin, end, true);
  return lexer.decode(begin, end);
}

std::string describe_token(const Token& t, std::string_view source_text) {
  switch (t.kind) {
    case Tok::kEof: return "end of file";
    case Tok::kNewline: return "new line";
    case Tok::kIndent: return "indentation";
    case Tok::kDedent: return "dedentation";
    case Tok::kIdent: return "identifier '" + t.text + "'";
    case Tok::kInt: return "integer literal '" + std::to_string(t.int_value) + "'";
    case Tok::kFloat: return "float literal";
    case Tok::kString:
    case Tok::kBytes: return "string literal \"" + t.text + "\"";
    case Tok::kFString: return "f-string literal";
    default: break;
  }
  std::string_view text = source_text.substr(t.span.begin, t.span.end - t.span.begin);
  bool word = !text.empty() && is_ident_start(text[0]);
  return std::string(word ? "keyword '" : "symbol '") + std::string(text) + "'";
}

}  // namespace codexd::starlark
