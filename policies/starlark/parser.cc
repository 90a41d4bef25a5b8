#include "policies/starlark/parser.h"

#include <algorithm>
#include <optional>

#include "policies/starlark/lexer.h"

namespace codexd::starlark {

const char* binary_op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kFloorDiv: return "//";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kBitAnd: return "&";
    case BinaryOp::kBitOr: return "|";
    case BinaryOp::kBitXor: return "^";
    case BinaryOp::kShl: return "<<";
    case BinaryOp::kShr: return ">>";
    case BinaryOp::kEq: return "==";
    case BinaryOp::kNe: return "!=";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kGe: return ">=";
    case BinaryOp::kIn: return "in";
    case BinaryOp::kNotIn: return "not in";
  }
  return "?";
}

namespace {

class Parser {
 public:
  Parser(std::shared_ptr<const SourceFile> source, std::vector<Token> tokens, AstArena* arena, const ParseLimits& limits)
      : source_(std::move(source)), tokens_(std::move(tokens)), arena_(arena), limits_(limits) {}

  std::vector<Stmt*> parse_file() {
    std::vector<Stmt*> out;
    while (!at(Tok::kEof)) {
      if (accept(Tok::kNewline)) continue;
      parse_statement(out);
    }
    return out;
  }

  // An f-string replacement field: exactly one expression.
  Expr* parse_lone_expression() {
    Expr* e = parse_test();
    if (!at(Tok::kEof)) unexpected("f-string expression end '}'");
    return e;
  }

 private:
  // ---- token helpers ----
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  bool at(Tok kind) const { return peek().kind == kind; }
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool accept(Tok kind) {
    if (!at(kind)) return false;
    advance();
    return true;
  }
  const Token& expect(Tok kind, const char* what) {
    if (!at(kind)) unexpected(what);
    return advance();
  }
  [[noreturn]] void fail(Span span, const std::string& message) {
    Error e;
    e.kind = ErrorKind::kParse;
    e.message = message;
    e.span = span;
    e.source = source_;
    throw e;
  }
  [[noreturn]] void unexpected(const std::string& expected) {
    fail(peek().span, "Parse error: unexpected " + describe_token(peek(), source_->text()) + ", expected " + expected);
  }
  Span span_from(Span begin) const {
    uint32_t end = pos_ > 0 ? tokens_[pos_ - 1].span.end : begin.end;
    return {begin.begin, std::max(end, begin.begin)};
  }

  struct DepthGuard {
    explicit DepthGuard(Parser* p) : parser(p) {
      if (++parser->depth_ > parser->limits_.max_nesting) {
        parser->fail(parser->peek().span, "Parse error: nesting too deep (limit " +
                                              std::to_string(parser->limits_.max_nesting) + ")");
      }
    }
    ~DepthGuard() { --parser->depth_; }
    Parser* parser;
  };

  // ---- statements ----
  void parse_statement(std::vector<Stmt*>& out) {
    DepthGuard guard(this);
    switch (peek().kind) {
      case Tok::kDef: out.push_back(parse_def()); return;
      case Tok::kIf: out.push_back(parse_if()); return;
      case Tok::kFor: out.push_back(parse_for()); return;
      case Tok::kIndent: fail(peek().span, "Parse error: unexpected indentation");
      default: parse_simple_statements(out);
    }
  }

  std::vector<Stmt*> parse_suite() {
    std::vector<Stmt*> body;
    if (accept(Tok::kNewline)) {
      expect(Tok::kIndent, "indentation");
      while (!accept(Tok::kDedent)) {
        if (at(Tok::kEof)) break;
        parse_statement(body);
      }
    } else {
      parse_simple_statements(body);
    }
    return body;
  }

  Stmt* parse_def() {
    Span begin = advance().span;
    const Token& name = expect(Tok::kIdent, "identifier");
    Stmt* s = arena_->new_stmt(StmtKind::kDef, begin);
    FunctionDef* fn = arena_->new_function();
    fn->name = name.text;
    expect(Tok::kLParen, "symbol '('");
    fn->params = parse_parameters(Tok::kRParen, /*allow_annotations=*/true);
    expect(Tok::kRParen, "symbol ')'");
    if (accept(Tok::kArrow)) parse_test();  // return annotation: parsed, ignored
    expect(Tok::kColon, "symbol ':'");
    int saved_loops = loop_depth_;
    bool saved_in_def = in_def_;
    loop_depth_ = 0;
    in_def_ = true;
    fn->body = parse_suite();
    loop_depth_ = saved_loops;
    in_def_ = saved_in_def;
    s->span = span_from(begin);
    fn->span = s->span;
    s->function = fn;
    return s;
  }

  std::vector<Parameter> parse_parameters(Tok end, bool allow_annotations) {
    std::vector<Parameter> params;
    bool seen_default = false, seen_star = false, seen_kwargs = false;
    while (!at(end)) {
      Parameter p;
      Span begin = peek().span;
      if (seen_kwargs) fail(begin, "Parse error: parameter after **kwargs");
      if (accept(Tok::kStarStar)) {
        p.kind = Parameter::Kind::kStarStar;
        p.name = expect(Tok::kIdent, "identifier").text;
        seen_kwargs = true;
      } else if (accept(Tok::kStar)) {
        if (seen_star) fail(begin, "Parse error: duplicated '*' parameter");
        p.kind = Parameter::Kind::kStar;
        if (at(Tok::kIdent)) p.name = advance().text;
        seen_star = true;
      } else {
        p.name = expect(Tok::kIdent, "identifier").text;
      }
      if (allow_annotations && p.kind != Parameter::Kind::kStar ? accept(Tok::kColon) : false) parse_test();
      if (allow_annotations && p.kind == Parameter::Kind::kStar && !p.name.empty() && accept(Tok::kColon)) parse_test();
      if (p.kind == Parameter::Kind::kNormal) {
        if (accept(Tok::kAssign)) {
          p.default_value = parse_test();
          seen_default = true;
        } else if (seen_default && !seen_star) {
          fail(span_from(begin), "Parse error: positional parameter after non positional");
        }
      }
      p.span = span_from(begin);
      for (const Parameter& other : params) {
        if (!p.name.empty() && other.name == p.name) fail(p.span, "Parse error: duplicated parameter name `" + p.name + "`");
      }
      params.push_back(std::move(p));
      if (!accept(Tok::kComma)) break;
    }
    return params;
  }

  Stmt* parse_if() {
    Span begin = advance().span;  // 'if' or 'elif'
    Stmt* s = arena_->new_stmt(StmtKind::kIf, begin);
    s->value = parse_test();
    expect(Tok::kColon, "symbol ':'");
    s->body = parse_suite();
    if (at(Tok::kElif)) {
      DepthGuard guard(this);
      s->orelse.push_back(parse_if());
    } else if (accept(Tok::kElse)) {
      expect(Tok::kColon, "symbol ':'");
      s->orelse = parse_suite();
    }
    s->span = span_from(begin);
    return s;
  }

  Stmt* parse_for() {
    Span begin = advance().span;
    Stmt* s = arena_->new_stmt(StmtKind::kFor, begin);
    s->target = parse_loop_variables();
    expect(Tok::kIn, "keyword 'in'");
    s->value = parse_expression_list();
    expect(Tok::kColon, "symbol ':'");
    ++loop_depth_;
    s->body = parse_suite();
    --loop_depth_;
    s->span = span_from(begin);
    return s;
  }

  Expr* parse_loop_variables() {
    Span begin = peek().span;
    Expr* first = parse_primary();
    if (!at(Tok::kComma)) {
      check_target(first);
      return first;
    }
    Expr* tuple = arena_->new_expr(ExprKind::kTuple, begin);
    tuple->items.push_back(first);
    while (accept(Tok::kComma)) {
      if (at(Tok::kIn)) break;
      tuple->items.push_back(parse_primary());
    }
    tuple->span = span_from(begin);
    check_target(tuple);
    return tuple;
  }

  void parse_simple_statements(std::vector<Stmt*>& out) {
    while (true) {
      out.push_back(parse_small_statement());
      if (!accept(Tok::kSemicolon)) break;
      if (at(Tok::kNewline) || at(Tok::kEof)) break;
    }
    if (!accept(Tok::kNewline) && !at(Tok::kEof)) unexpected("new line");
  }

  Stmt* parse_small_statement() {
    Span begin = peek().span;
    switch (peek().kind) {
      case Tok::kReturn: {
        advance();
        if (!in_def_) fail(begin, "Parse error: return cannot be used outside of def");
        Stmt* s = arena_->new_stmt(StmtKind::kReturn, begin);
        if (!at(Tok::kNewline) && !at(Tok::kSemicolon) && !at(Tok::kEof)) s->value = parse_expression_list();
        s->span = span_from(begin);
        return s;
      }
      case Tok::kBreak:
      case Tok::kContinue: {
        bool is_break = at(Tok::kBreak);
        advance();
        if (loop_depth_ == 0) {
          fail(begin, std::string("Parse error: ") + (is_break ? "break" : "continue") + " cannot be used outside of loop");
        }
        return arena_->new_stmt(is_break ? StmtKind::kBreak : StmtKind::kContinue, begin);
      }
      case Tok::kPass: advance(); return arena_->new_stmt(StmtKind::kPass, begin);
      case Tok::kLoad: return parse_load();
      default: break;
    }
    Expr* lhs = parse_expression_list();
    Tok op = peek().kind;
    if (op == Tok::kAssign) {
      advance();
      check_target(lhs);
      Stmt* s = arena_->new_stmt(StmtKind::kAssign, begin);
      s->target = lhs;
      s->value = parse_expression_list();
      s->span = span_from(begin);
      return s;
    }
    if (auto aug = augmented_op(op)) {
      advance();
      if (lhs->kind != ExprKind::kIdentifier && lhs->kind != ExprKind::kIndex && lhs->kind != ExprKind::kDot) {
        fail(lhs->span, "Parse error: augmented assignment to an invalid target");
      }
      Stmt* s = arena_->new_stmt(StmtKind::kAugAssign, begin);
      s->target = lhs;
      s->aug_op = *aug;
      s->value = parse_expression_list();
      s->span = span_from(begin);
      return s;
    }
    Stmt* s = arena_->new_stmt(StmtKind::kExpr, begin);
    s->value = lhs;
    s->span = span_from(begin);
    return s;
  }

  static std::optional<BinaryOp> augmented_op(Tok t) {
    switch (t) {
      case Tok::kPlusEq: return BinaryOp::kAdd;
      case Tok::kMinusEq: return BinaryOp::kSub;
      case Tok::kStarEq: return BinaryOp::kMul;
      case Tok::kSlashEq: return BinaryOp::kDiv;
      case Tok::kSlashSlashEq: return BinaryOp::kFloorDiv;
      case Tok::kPercentEq: return BinaryOp::kMod;
      case Tok::kAmpEq: return BinaryOp::kBitAnd;
      case Tok::kPipeEq: return BinaryOp::kBitOr;
      case Tok::kCaretEq: return BinaryOp::kBitXor;
      case Tok::kShlEq: return BinaryOp::kShl;
      case Tok::kShrEq: return BinaryOp::kShr;
      default: return std::nullopt;
    }
  }

  void check_target(Expr* e) {
    DepthGuard guard(this);
    switch (e->kind) {
      case ExprKind::kIdentifier:
      case ExprKind::kIndex:
      case ExprKind::kDot: return;
      case ExprKind::kTuple:
      case ExprKind::kList:
        if (e->items.empty()) break;
        for (Expr* item : e->items) check_target(item);
        return;
      default: break;
    }
    fail(e->span, "Parse error: left-hand-side of assignment must take the form `a`, `a.b`, `a[b]` or `a, b`");
  }

  Stmt* parse_load() {
    Span begin = advance().span;
    Stmt* s = arena_->new_stmt(StmtKind::kLoad, begin);
    expect(Tok::kLParen, "symbol '('");
    s->module = expect(Tok::kString, "string literal").text;
    while (accept(Tok::kComma)) {
      if (at(Tok::kRParen)) break;
      LoadBinding b;
      Span item = peek().span;
      if (at(Tok::kIdent)) {
        b.local_name = advance().text;
        expect(Tok::kAssign, "symbol '='");
        b.symbol = expect(Tok::kString, "string literal").text;
      } else {
        b.symbol = expect(Tok::kString, "string literal").text;
        b.local_name = b.symbol;
      }
      b.span = span_from(item);
      s->loads.push_back(std::move(b));
    }
    expect(Tok::kRParen, "symbol ')'");
    s->span = span_from(begin);
    if (s->loads.empty()) fail(s->span, "Parse error: load statement must have at least one symbol");
    return s;
  }

  // ---- expressions ----
  // expression_list: test (',' test)* [','] -- a tuple when there is a comma.
  Expr* parse_expression_list() {
    Span begin = peek().span;
    Expr* first = parse_test();
    if (!at(Tok::kComma)) return first;
    Expr* tuple = arena_->new_expr(ExprKind::kTuple, begin);
    tuple->items.push_back(first);
    while (accept(Tok::kComma)) {
      if (!starts_expression()) {
        fail(span_from(begin), "unparenthesized tuple with trailing comma");
      }
      tuple->items.push_back(parse_test());
    }
    tuple->span = span_from(begin);
    return tuple;
  }

  bool starts_expression() const {
    switch (peek().kind) {
      case Tok::kIdent: case Tok::kInt: case Tok::kFloat: case Tok::kString: case Tok::kFString:
      case Tok::kLParen: case Tok::kLBracket: case Tok::kLBrace: case Tok::kMinus: case Tok::kPlus:
      case Tok::kTilde: case Tok::kNot: case Tok::kLambda:
        return true;
      default: return false;
    }
  }

  Expr* parse_test() {
    DepthGuard guard(this);
    if (at(Tok::kLambda)) return parse_lambda();
    Span begin = peek().span;
    Expr* e = parse_or();
    if (at(Tok::kIf)) {
      advance();
      Expr* cond = parse_or();
      expect(Tok::kElse, "keyword 'else'");
      Expr* other = parse_test();
      Expr* c = arena_->new_expr(ExprKind::kConditional, begin);
      c->a = cond;
      c->b = e;
      c->c = other;
      c->span = span_from(begin);
      return c;
    }
    return e;
  }

  Expr* parse_lambda() {
    Span begin = advance().span;
    FunctionDef* fn = arena_->new_function();
    fn->name = "lambda";
    fn->params = parse_parameters(Tok::kColon, /*allow_annotations=*/false);
    expect(Tok::kColon, "symbol ':'");
    bool saved = in_def_;
    in_def_ = true;
    fn->lambda_body = parse_test();
    in_def_ = saved;
    Expr* e = arena_->new_expr(ExprKind::kLambda, begin);
    e->span = span_from(begin);
    fn->span = e->span;
    e->function = fn;
    return e;
  }

  Expr* parse_or() {
    Span begin = peek().span;
    Expr* e = parse_and();
    while (at(Tok::kOr)) {
      DepthGuard guard(this);
      advance();
      Expr* rhs = parse_and();
      Expr* n = arena_->new_expr(ExprKind::kOr, begin);
      n->a = e;
      n->b = rhs;
      n->span = span_from(begin);
      e = n;
    }
    return e;
  }

  Expr* parse_and() {
    Span begin = peek().span;
    Expr* e = parse_not();
    while (at(Tok::kAnd)) {
      DepthGuard guard(this);
      advance();
      Expr* rhs = parse_not();
      Expr* n = arena_->new_expr(ExprKind::kAnd, begin);
      n->a = e;
      n->b = rhs;
      n->span = span_from(begin);
      e = n;
    }
    return e;
  }

  Expr* parse_not() {
    if (at(Tok::kNot)) {
      DepthGuard guard(this);
      Span begin = advance().span;
      Expr* operand = parse_not();
      Expr* n = arena_->new_expr(ExprKind::kNot, begin);
      n->a = operand;
      n->span = span_from(begin);
      return n;
    }
    return parse_comparison();
  }

  std::optional<BinaryOp> comparison_op() {
    switch (peek().kind) {
      case Tok::kEq: return BinaryOp::kEq;
      case Tok::kNe: return BinaryOp::kNe;
      case Tok::kLt: return BinaryOp::kLt;
      case Tok::kGt: return BinaryOp::kGt;
      case Tok::kLe: return BinaryOp::kLe;
      case Tok::kGe: return BinaryOp::kGe;
      case Tok::kIn: return BinaryOp::kIn;
      case Tok::kNot:
        if (peek(1).kind == Tok::kIn) return BinaryOp::kNotIn;
        return std::nullopt;
      default: return std::nullopt;
    }
  }

  Expr* parse_comparison() {
    Span begin = peek().span;
    Expr* e = parse_binary(0);
    if (auto op = comparison_op()) {
      advance();
      if (*op == BinaryOp::kNotIn) advance();
      Expr* rhs = parse_binary(0);
      e = make_binary(*op, e, rhs, begin);
      if (comparison_op()) unexpected("end of expression (comparisons are not associative in Starlark)");
    }
    return e;
  }

  Expr* make_binary(BinaryOp op, Expr* lhs, Expr* rhs, Span begin) {
    Expr* n = arena_->new_expr(ExprKind::kBinary, begin);
    n->binary_op = op;
    n->a = lhs;
    n->b = rhs;
    n->span = span_from(begin);
    return n;
  }

  // Precedence levels, loosest first: | ^ & <</>> +/- * / // %
  static int level_of(Tok t, BinaryOp* op) {
    switch (t) {
      case Tok::kPipe: *op = BinaryOp::kBitOr; return 0;
      case Tok::kCaret: *op = BinaryOp::kBitXor; return 1;
      case Tok::kAmp: *op = BinaryOp::kBitAnd; return 2;
      case Tok::kShl: *op = BinaryOp::kShl; return 3;
      case Tok::kShr: *op = BinaryOp::kShr; return 3;
      case Tok::kPlus: *op = BinaryOp::kAdd; return 4;
      case Tok::kMinus: *op = BinaryOp::kSub; return 4;
      case Tok::kStar: *op = BinaryOp::kMul; return 5;
      case Tok::kSlash: *op = BinaryOp::kDiv; return 5;
      case Tok::kSlashSlash: *op = BinaryOp::kFloorDiv; return 5;
      case Tok::kPercent: *op = BinaryOp::kMod; return 5;
      default: return -1;
    }
  }

  Expr* parse_binary(int min_level) {
    DepthGuard guard(this);
    if (min_level > 5) return parse_unary();
    Span begin = peek().span;
    Expr* e = parse_binary(min_level + 1);
    BinaryOp op = BinaryOp::kAdd;
    while (level_of(peek().kind, &op) == min_level) {
      advance();
      Expr* rhs = parse_binary(min_level + 1);
      e = make_binary(op, e, rhs, begin);
    }
    return e;
  }

  Expr* parse_unary() {
    UnaryOp op;
    switch (peek().kind) {
      case Tok::kPlus: op = UnaryOp::kPlus; break;
      case Tok::kMinus: op = UnaryOp::kMinus; break;
      case Tok::kTilde: op = UnaryOp::kInvert; break;
      default: return parse_primary();
    }
    DepthGuard guard(this);
    Span begin = advance().span;
    Expr* operand = parse_unary();
    Expr* n = arena_->new_expr(ExprKind::kUnary, begin);
    n->unary_op = op;
    n->a = operand;
    n->span = span_from(begin);
    return n;
  }

  Expr* parse_primary() {
    Span begin = peek().span;
    Expr* e = parse_operand();
    while (true) {
      if (at(Tok::kLParen)) {
        DepthGuard guard(this);
        advance();
        Expr* call = arena_->new_expr(ExprKind::kCall, begin);
        call->a = e;
        call->args = parse_arguments();
        expect(Tok::kRParen, "symbol ')'");
        call->span = span_from(begin);
        e = call;
      } else if (at(Tok::kLBracket)) {
        DepthGuard guard(this);
        advance();
        e = parse_index_or_slice(e, begin);
      } else if (at(Tok::kDot)) {
        advance();
        const Token& name = expect(Tok::kIdent, "identifier");
        Expr* dot = arena_->new_expr(ExprKind::kDot, begin);
        dot->a = e;
        dot->name = name.text;
        dot->span = span_from(begin);
        e = dot;
      } else {
        return e;
      }
    }
  }

  Expr* parse_index_or_slice(Expr* object, Span begin) {
    Expr* parts[3] = {nullptr, nullptr, nullptr};
    int colons = 0;
    if (!at(Tok::kColon)) parts[0] = parse_test();
    while (colons < 2 && accept(Tok::kColon)) {
      ++colons;
      if (!at(Tok::kColon) && !at(Tok::kRBracket)) parts[colons] = parse_test();
    }
    expect(Tok::kRBracket, "symbol ']'");
    if (colons == 0) {
      if (!parts[0]) unexpected("expression");
      Expr* n = arena_->new_expr(ExprKind::kIndex, begin);
      n->a = object;
      n->b = parts[0];
      n->span = span_from(begin);
      return n;
    }
    Expr* n = arena_->new_expr(ExprKind::kSlice, begin);
    n->a = object;
    n->b = parts[0];
    n->c = parts[1];
    n->d = parts[2];
    n->span = span_from(begin);
    return n;
  }

  std::vector<Argument> parse_arguments() {
    std::vector<Argument> args;
    bool seen_named = false, seen_star = false, seen_starstar = false;
    while (!at(Tok::kRParen)) {
      Argument a;
      Span begin = peek().span;
      if (accept(Tok::kStarStar)) {
        a.kind = Argument::Kind::kStarStar;
        a.value = parse_test();
      } else if (accept(Tok::kStar)) {
        a.kind = Argument::Kind::kStar;
        a.value = parse_test();
      } else if (at(Tok::kIdent) && peek(1).kind == Tok::kAssign) {
        a.kind = Argument::Kind::kNamed;
        a.name = advance().text;
        advance();
        a.value = parse_test();
      } else {
        a.value = parse_test();
      }
      a.span = span_from(begin);
      switch (a.kind) {
        case Argument::Kind::kPositional:
          if (seen_named || seen_star || seen_starstar) fail(a.span, "positional argument after non positional");
          break;
        case Argument::Kind::kNamed:
          if (seen_star || seen_starstar) fail(a.span, "named argument after *args or **kwargs");
          for (const Argument& other : args) {
            if (other.kind == Argument::Kind::kNamed && other.name == a.name) {
              fail({begin.begin, begin.begin + static_cast<uint32_t>(a.name.size())}, "repeated named argument");
            }
          }
          seen_named = true;
          break;
        case Argument::Kind::kStar:
          if (seen_star || seen_starstar) fail(a.span, "Args array after another args or kwargs");
          seen_star = true;
          break;
        case Argument::Kind::kStarStar:
          if (seen_starstar) fail(a.span, "Multiple kwargs dictionary in arguments");
          seen_starstar = true;
          break;
      }
      args.push_back(std::move(a));
      if (!accept(Tok::kComma)) break;
    }
    return args;
  }

  Expr* parse_operand() {
    DepthGuard guard(this);
    const Token& t = peek();
    Span begin = t.span;
    switch (t.kind) {
      case Tok::kIdent: {
        Expr* e = arena_->new_expr(ExprKind::kIdentifier, begin);
        e->name = advance().text;
        return e;
      }
      case Tok::kInt: {
        Expr* e = arena_->new_expr(ExprKind::kInt, begin);
        e->int_value = advance().int_value;
        return e;
      }
      case Tok::kFloat: {
        Expr* e = arena_->new_expr(ExprKind::kFloat, begin);
        e->float_value = advance().float_value;
        return e;
      }
      case Tok::kString: {
        Expr* e = arena_->new_expr(ExprKind::kString, begin);
        e->name = advance().text;
        if (at(Tok::kString) || at(Tok::kFString)) unexpected("new line");  // no implicit concatenation
        return e;
      }
      case Tok::kFString: {
        Expr* e = parse_fstring(advance());
        if (at(Tok::kString) || at(Tok::kFString)) unexpected("new line");
        return e;
      }
      case Tok::kLParen: return parse_paren();
      case Tok::kLBracket: return parse_list();
      case Tok::kLBrace: return parse_dict();
      default: unexpected("expression");
    }
  }

  Expr* parse_paren() {
    Span begin = advance().span;
    if (accept(Tok::kRParen)) {
      Expr* e = arena_->new_expr(ExprKind::kTuple, begin);
      e->span = span_from(begin);
      return e;
    }
    Expr* first = parse_test();
    if (at(Tok::kFor)) fail(peek().span, "Parse error: generator expressions are not supported");
    if (accept(Tok::kRParen)) return first;
    Expr* tuple = arena_->new_expr(ExprKind::kTuple, begin);
    tuple->items.push_back(first);
    while (accept(Tok::kComma)) {
      if (at(Tok::kRParen)) break;
      tuple->items.push_back(parse_test());
    }
    expect(Tok::kRParen, "symbol ')'");
    tuple->span = span_from(begin);
    return tuple;
  }

  Expr* parse_list() {
    Span begin = advance().span;
    Expr* e = arena_->new_expr(ExprKind::kList, begin);
    if (!at(Tok::kRBracket)) {
      Expr* first = parse_test();
      if (at(Tok::kFor)) {
        e->kind = ExprKind::kListComp;
        e->a = first;
        e->clauses = parse_clauses();
        expect(Tok::kRBracket, "symbol ']'");
        e->span = span_from(begin);
        return e;
      }
      e->items.push_back(first);
      while (accept(Tok::kComma)) {
        if (at(Tok::kRBracket)) break;
        e->items.push_back(parse_test());
      }
    }
    expect(Tok::kRBracket, "symbol ']'");
    e->span = span_from(begin);
    return e;
  }

  Expr* parse_dict() {
    Span begin = advance().span;
    Expr* e = arena_->new_expr(ExprKind::kDict, begin);
    if (!at(Tok::kRBrace)) {
      Expr* key = parse_test();
      expect(Tok::kColon, "symbol ':'");
      Expr* value = parse_test();
      if (at(Tok::kFor)) {
        e->kind = ExprKind::kDictComp;
        e->a = key;
        e->b = value;
        e->clauses = parse_clauses();
        expect(Tok::kRBrace, "symbol '}'");
        e->span = span_from(begin);
        return e;
      }
      e->items.push_back(key);
      e->items.push_back(value);
      while (accept(Tok::kComma)) {
        if (at(Tok::kRBrace)) break;
        e->items.push_back(parse_test());
        expect(Tok::kColon, "symbol ':'");
        e->items.push_back(parse_test());
      }
    }
    expect(Tok::kRBrace, "symbol '}'");
    e->span = span_from(begin);
    return e;
  }

  std::vector<ComprehensionClause> parse_clauses() {
    std::vector<ComprehensionClause> clauses;
    while (true) {
      DepthGuard guard(this);
      ComprehensionClause c;
      if (accept(Tok::kFor)) {
        c.is_for = true;
        c.target = parse_loop_variables();
        expect(Tok::kIn, "keyword 'in'");
        c.iterable = parse_or();
      } else if (accept(Tok::kIf)) {
        c.is_for = false;
        c.condition = parse_or();
      } else {
        break;
      }
      clauses.push_back(c);
    }
    return clauses;
  }

  // f"...": literal text with {expr[!r|!s]} fields; {{ and }} are literal braces. Each field
  // becomes a part holding the literal text before it; a last part holds the tail.
  Expr* parse_fstring(const Token& t) {
    Expr* e = arena_->new_expr(ExprKind::kFString, t.span);
    const std::string& body = t.text;
    uint32_t base = t.body_begin;
    size_t i = 0;
    size_t literal_begin = 0;
    std::string literal;
    while (i < body.size()) {
      char c = body[i];
      if (c == '\\') {
        i += 2;  // an escape (even \{) is literal text
        continue;
      }
      if ((c == '{' || c == '}') && i + 1 < body.size() && body[i + 1] == c) {
        append_fstring_literal(t, literal_begin, i + 1, literal);  // keeps one of the two braces
        i += 2;
        literal_begin = i;
        continue;
      }
      if (c == '}') {
        fail({base + static_cast<uint32_t>(i), base + static_cast<uint32_t>(i + 1)},
             "Parse error: f-string: single '}' is not allowed");
      }
      if (c != '{') {
        ++i;
        continue;
      }
      append_fstring_literal(t, literal_begin, i, literal);
      i = parse_fstring_part(t, i, literal, e);
      literal_begin = i;
    }
    append_fstring_literal(t, literal_begin, body.size(), literal);
    FStringPart tail;
    tail.literal = std::move(literal);
    e->fstring.push_back(std::move(tail));
    return e;
  }

  // Appends body[begin, end) of an f-string token to literal, escapes decoded unless raw.
  void append_fstring_literal(const Token& t, size_t begin, size_t end, std::string& literal) {
    if (end <= begin) return;
    uint32_t base = t.body_begin;
    literal += t.raw_string ? t.text.substr(begin, end - begin)
                            : decode_string_body(source_, base + static_cast<uint32_t>(begin),
                                                 base + static_cast<uint32_t>(end));
  }

  // The field whose '{' is at body[open]: appends a part (taking literal) to e and returns
  // the index just past its closing '}'.
  size_t parse_fstring_part(const Token& t, size_t open, std::string& literal, Expr* e) {
    const std::string& body = t.text;
    uint32_t base = t.body_begin;
    size_t expr_begin = open + 1;
    size_t j = fstring_field_end(body, expr_begin);
    if (j >= body.size()) {
      fail({base + static_cast<uint32_t>(open), base + static_cast<uint32_t>(body.size())},
           "Parse error: f-string: expecting '}'");
    }
    FStringPart part;
    part.literal = std::move(literal);
    literal.clear();
    part.expr = parse_fstring_field(base + static_cast<uint32_t>(expr_begin), base + static_cast<uint32_t>(j));
    if (body[j] == '!') {
      if (j + 2 < body.size() && (body[j + 1] == 'r' || body[j + 1] == 's') && body[j + 2] == '}') {
        part.conversion = body[j + 1];
        j += 2;
      } else {
        fail({base + static_cast<uint32_t>(j), base + static_cast<uint32_t>(j + 1)},
             "Parse error: f-string: invalid conversion");
      }
    }
    e->fstring.push_back(std::move(part));
    return j + 1;
  }

  // Index of the '}' or '!' ending a field's expression (skipping brackets and quoted
  // text), or body.size() when there is none.
  static size_t fstring_field_end(const std::string& body, size_t j) {
    int nesting = 0;
    char quote = 0;
    while (j < body.size()) {
      char d = body[j];
      if (quote) {
        if (d == quote) quote = 0;
      } else if (d == '\'' || d == '"') {
        quote = d;
      } else if (d == '(' || d == '[' || d == '{') {
        ++nesting;
      } else if ((d == ')' || d == ']' || d == '}') && nesting > 0) {
        --nesting;
      } else if (nesting == 0 && (d == '}' || d == '!')) {
        break;
      }
      ++j;
    }
    return j;
  }

  Expr* parse_fstring_field(uint32_t begin, uint32_t end) {
    DepthGuard guard(this);
    LexResult lexed = tokenize(source_, begin, end, /*expression_only=*/true);
    if (!lexed.ok) throw lexed.error;
    if (lexed.tokens.size() == 1) fail({begin, end}, "Parse error: f-string: empty expression");
    Parser sub(source_, std::move(lexed.tokens), arena_, limits_);
    sub.depth_ = depth_;
    sub.in_def_ = in_def_;
    return sub.parse_lone_expression();
  }

  std::shared_ptr<const SourceFile> source_;
  std::vector<Token> tokens_;
  AstArena* arena_;
  ParseLimits limits_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
  bool in_def_ = false;
};

}  // namespace

ParseResult parse_module(std::shared_ptr<const SourceFile> source, const ParseLimits& limits) {
  ParseResult result;
  result.module.source = source;
  result.module.arena = std::make_unique<AstArena>();
  LexResult lexed = tokenize(source, 0, static_cast<uint32_t>(source->text().size()), false);
  if (!lexed.ok) {
    result.error = std::move(lexed.error);
    return result;
  }
  try {
    Parser parser(source, std::move(lexed.tokens), result.module.arena.get(), limits);
    result.module.statements = parser.parse_file();
    result.ok = true;
  } catch (Error& e) {
    result.error = std::move(e);
  }
  return result;
}

}  // namespace codexd::starlark
