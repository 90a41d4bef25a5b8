// Tokens of the Starlark dialect accepted in rules files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "policies/starlark/source.h"

namespace codexd::starlark {

enum class Tok : uint8_t {
  kEof,
  kNewline,
  kIndent,
  kDedent,
  kIdent,
  kInt,
  kFloat,
  kString,
  kBytes,
  kFString,
  // keywords
  kAnd, kBreak, kContinue, kDef, kElif, kElse, kFor, kIf, kIn, kLambda, kLoad, kNot, kOr, kPass, kReturn,
  // punctuation and operators
  kLParen, kRParen, kLBracket, kRBracket, kLBrace, kRBrace,
  kComma, kColon, kSemicolon, kDot, kArrow,
  kAssign, kPlusEq, kMinusEq, kStarEq, kSlashEq, kSlashSlashEq, kPercentEq, kAmpEq, kPipeEq, kCaretEq,
  kShlEq, kShrEq,
  kPlus, kMinus, kStar, kStarStar, kSlash, kSlashSlash, kPercent, kTilde, kAmp, kPipe, kCaret, kShl, kShr,
  kEq, kNe, kLt, kGt, kLe, kGe,
};

struct Token {
  Tok kind = Tok::kEof;
  Span span;
  std::string text;        // identifier name, decoded string value, or raw f-string body
  int64_t int_value = 0;
  double float_value = 0;
  bool raw_string = false;  // f-strings: r prefix (escapes are not decoded)
  uint32_t body_begin = 0;  // f-strings: offset of the body in the source
};

// How a token is named in "expected ..." / "unexpected ..." parse messages.
std::string describe_token(const Token& token, std::string_view source_text);

}  // namespace codexd::starlark
