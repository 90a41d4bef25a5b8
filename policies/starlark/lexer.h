// Turns Starlark source into tokens, including NEWLINE/INDENT/DEDENT. Rejects what Codex's
// lexer rejects: tabs, unknown characters, reserved keywords, bad escapes (incl. surrogates).
#pragma once

#include <memory>
#include <vector>

#include "policies/starlark/error.h"
#include "policies/starlark/token.h"

namespace codexd::starlark {

struct LexResult {
  std::vector<Token> tokens;  // valid when ok
  bool ok = false;
  Error error;
};

// Tokenizes source->text()[begin, end). `expression_only` lexes an f-string replacement field:
// no indentation, newlines are plain whitespace.
LexResult tokenize(std::shared_ptr<const SourceFile> source, uint32_t begin, uint32_t end, bool expression_only);

// Decodes the escapes of a (non-raw) string body as in a string literal. Used by the parser for
// f-string literal parts. Throws Error (kParse) on a bad escape.
std::string decode_string_body(const std::shared_ptr<const SourceFile>& source, uint32_t begin, uint32_t end);

}  // namespace codexd::starlark
