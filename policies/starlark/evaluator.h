// Tree-walking evaluator over a resolved module. Internal to codexd_starlark: use module.h.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "policies/starlark/ast.h"
#include "policies/starlark/error.h"
#include "policies/starlark/limits.h"
#include "policies/starlark/value.h"

namespace codexd::starlark {

class Evaluator {
 public:
  Evaluator(const ParsedModule& module, std::vector<Value> globals, const EvalLimits& limits, Heap& heap);

  // Runs the module top to bottom. Throws Error.
  void run();

  Heap& heap() { return heap_; }
  // Charges native work (e.g. per element); throws NativeError when the budget is spent.
  void charge_steps(uint64_t n);
  // Calls a callable from native code (sorted(key=...), etc.), at the current call site.
  Value call(const Value& callee, CallArgs& args);
  const std::string& module_name() const { return module_name_; }
  // "file:line:col" of the innermost active call (builtins record where they were called).
  std::string current_call_location() const;

 private:
  enum class Flow { kNormal, kBreak, kContinue, kReturn };

  struct DepthGuard {
    DepthGuard(Evaluator* e, Span span);
    ~DepthGuard() { --ev->depth_; }
    Evaluator* ev;
  };

  [[noreturn]] void fail_at(Span span, const std::string& message);
  void step(Span span);

  Flow exec_block(const std::vector<Stmt*>& block, Frame* frame);
  Flow exec(const Stmt* s, Frame* frame);
  void exec_for(const Stmt* s, Frame* frame, Flow* flow);
  void assign(const Expr* target, const Value& value, Frame* frame, Span stmt_span);
  void store(const Binding& b, const Value& value, Frame* frame);
  Value load(const Expr* ident, Frame* frame);

  Value eval(const Expr* e, Frame* frame);
  Value eval_inner(const Expr* e, Frame* frame);
  Value eval_string_literal(const Expr* e);
  Value eval_fstring(const Expr* e, Frame* frame);
  Value eval_sequence(const Expr* e, Frame* frame);
  Value eval_dict(const Expr* e, Frame* frame);
  Value eval_slice(const Expr* e, Frame* frame);
  Value eval_attribute(const Expr* e, Frame* frame);
  Value eval_call(const Expr* e, Frame* frame);
  Value eval_comprehension(const Expr* e, Frame* frame);
  void comprehension_clause(const Expr* e, size_t index, Frame* frame, Value& result);
  Value make_function(const FunctionDef* def, Frame* frame);
  Value call_value(const Value& callee, CallArgs& args, Span site);
  Value call_function(FunctionObj* fn, CallArgs& args);

  template <typename F>
  void for_each_item(const Value& iterable, F&& body);

  const ParsedModule& module_;
  std::vector<Value> globals_;
  EvalLimits limits_;
  Heap& heap_;
  Frame module_frame_;
  std::string module_name_;
  std::vector<CallFrame> call_stack_;
  std::vector<std::string> function_names_;  // innermost last; "<module>" at the bottom
  uint64_t steps_ = 0;
  int depth_ = 0;
  Value return_value_;
  std::unordered_map<const Expr*, Value> string_constants_;
};

}  // namespace codexd::starlark
