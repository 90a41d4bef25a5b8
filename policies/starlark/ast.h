// Syntax tree of a Starlark module. Nodes live in an arena owned by the Module, so plain
// pointers between them are safe for the module's lifetime.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "policies/starlark/source.h"

namespace codexd::starlark {

struct Expr;
struct Stmt;

enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kBitAnd, kBitOr, kBitXor, kShl, kShr,
  kEq, kNe, kLt, kGt, kLe, kGe, kIn, kNotIn,
};
const char* binary_op_symbol(BinaryOp op);

enum class UnaryOp : uint8_t { kPlus, kMinus, kInvert };

// Where an identifier's value lives, decided by the resolver before evaluation.
struct Binding {
  enum class Scope : uint8_t { kUnresolved, kLocal, kFree, kModule, kGlobal };
  Scope scope = Scope::kUnresolved;
  uint32_t depth = 0;  // kFree: how many function scopes outward
  uint32_t slot = 0;   // kLocal/kFree/kModule: frame slot; kGlobal: global index
};

struct Argument {
  enum class Kind : uint8_t { kPositional, kNamed, kStar, kStarStar };
  Kind kind = Kind::kPositional;
  std::string name;  // kNamed
  Expr* value = nullptr;
  Span span;
};

struct Parameter {
  enum class Kind : uint8_t { kNormal, kStar, kStarStar };  // kStar with empty name: bare '*'
  Kind kind = Kind::kNormal;
  std::string name;
  Expr* default_value = nullptr;
  Span span;
  Binding binding;
};

struct FStringPart {
  std::string literal;   // text before the expression (already unescaped)
  Expr* expr = nullptr;  // null for the trailing literal
  char conversion = 's';
};

struct ComprehensionClause {
  bool is_for = true;
  Expr* target = nullptr;  // for
  Expr* iterable = nullptr;  // for
  Expr* condition = nullptr;  // if
};

struct FunctionDef;

enum class ExprKind : uint8_t {
  kIdentifier, kNone, kInt, kFloat, kString, kFString,
  kList, kTuple, kDict,
  kListComp, kDictComp,
  kUnary, kNot, kBinary, kAnd, kOr, kConditional,
  kLambda, kCall, kIndex, kSlice, kDot,
};

struct Expr {
  ExprKind kind;
  Span span;
  std::string name;  // identifier, attribute name, string literal
  int64_t int_value = 0;
  double float_value = 0;
  BinaryOp binary_op = BinaryOp::kAdd;
  UnaryOp unary_op = UnaryOp::kPlus;
  Binding binding;                    // identifier
  Expr* a = nullptr;                  // operand / callee / object / condition's value
  Expr* b = nullptr;                  // right operand / index / slice start / dict-comp value
  Expr* c = nullptr;                  // slice stop / else branch
  Expr* d = nullptr;                  // slice step
  std::vector<Expr*> items;           // list/tuple items; dict keys and values interleaved
  std::vector<Argument> args;         // call
  std::vector<FStringPart> fstring;   // f-string
  std::vector<ComprehensionClause> clauses;  // comprehensions
  FunctionDef* function = nullptr;    // lambda
  uint32_t scope_slots_begin = 0;     // comprehensions: first frame slot of its variables
};

enum class StmtKind : uint8_t {
  kExpr, kAssign, kAugAssign, kDef, kIf, kFor, kReturn, kBreak, kContinue, kPass, kLoad,
};

struct LoadBinding {
  std::string local_name;
  std::string symbol;
  Span span;
  Binding binding;
};

struct Stmt {
  StmtKind kind;
  Span span;
  Expr* target = nullptr;          // assign / aug-assign / for
  Expr* value = nullptr;           // expr / assign / return / if condition / for iterable
  BinaryOp aug_op = BinaryOp::kAdd;
  std::vector<Stmt*> body;         // if-then / for / (def uses function)
  std::vector<Stmt*> orelse;       // if-else (elif is a nested if)
  FunctionDef* function = nullptr; // def
  Binding def_binding;             // def: where the function is stored
  std::string module;              // load
  std::vector<LoadBinding> loads;  // load
};

struct FunctionDef {
  std::string name;  // "lambda" for lambdas
  Span span;
  std::vector<Parameter> params;
  std::vector<Stmt*> body;  // def
  Expr* lambda_body = nullptr;
  uint32_t slot_count = 0;  // locals incl. parameters and comprehension variables
  bool creates_closures = false;  // has a nested def/lambda: its frames must outlive the call
};

// Owns all nodes of one parsed module.
class AstArena {
 public:
  Expr* new_expr(ExprKind kind, Span span) {
    exprs_.emplace_back();
    exprs_.back().kind = kind;
    exprs_.back().span = span;
    return &exprs_.back();
  }
  Stmt* new_stmt(StmtKind kind, Span span) {
    stmts_.emplace_back();
    stmts_.back().kind = kind;
    stmts_.back().span = span;
    return &stmts_.back();
  }
  FunctionDef* new_function() {
    functions_.emplace_back();
    return &functions_.back();
  }

 private:
  std::deque<Expr> exprs_;
  std::deque<Stmt> stmts_;
  std::deque<FunctionDef> functions_;
};

struct ParsedModule {
  std::shared_ptr<const SourceFile> source;
  std::unique_ptr<AstArena> arena;
  std::vector<Stmt*> statements;
  uint32_t module_slot_count = 0;          // set by the resolver
  std::vector<std::string> module_slot_names;
  uint32_t module_scratch_slots = 0;       // comprehension variables at module level
};

}  // namespace codexd::starlark
