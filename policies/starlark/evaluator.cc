#include "policies/starlark/evaluator.h"

#include "policies/starlark/methods.h"
#include "policies/starlark/operators.h"
#include "policies/starlark/value_ops.h"

namespace codexd::starlark {
namespace {

// Marks a list/dict as being iterated for the lifetime of a loop (mutation is an error).
class IterationLock {
 public:
  explicit IterationLock(const Value& v) {
    if (v.is(Type::kList)) counter_ = &list_of(v)->iterating;
    if (v.is(Type::kDict)) counter_ = &dict_of(v)->iterating;
    if (counter_) ++*counter_;
  }
  ~IterationLock() {
    if (counter_) --*counter_;
  }
  IterationLock(const IterationLock&) = delete;
  IterationLock& operator=(const IterationLock&) = delete;

 private:
  int* counter_ = nullptr;
};

// ---- argument binding (call_function) ----
// Starlark's order: positional parameters, *args, **kwargs, named arguments, then
// defaults; `bound` marks the parameters filled so far. Errors use Codex's words.

// Fills the leading normal parameters from args.positional; the rest go to *args, or are
// an error when the function has no (named) *args.
void bind_positional(Heap& heap, const FunctionObj& fn, CallArgs& args, Frame& frame, int star_index,
                     std::vector<bool>& bound) {
  const auto& params = fn.def->params;
  size_t next_positional = 0;
  for (size_t i = 0; i < params.size() && next_positional < args.positional.size(); ++i) {
    if (params[i].kind != Parameter::Kind::kNormal) break;
    frame.slots[params[i].binding.slot] = args.positional[next_positional++];
    bound[i] = true;
  }
  if (next_positional < args.positional.size()) {
    if (star_index < 0 || params[star_index].name.empty()) {
      throw NativeError{"Found " + std::to_string(args.positional.size() - next_positional) +
                        " extra positional argument(s) for call to " + fn.qualified_name};
    }
  }
  if (star_index >= 0 && !params[star_index].name.empty()) {
    std::vector<Value> rest(args.positional.begin() + static_cast<std::ptrdiff_t>(next_positional), args.positional.end());
    frame.slots[params[star_index].binding.slot] = heap.tuple(std::move(rest));
    bound[star_index] = true;
  }
}

// Named arguments go to the normal parameter of that name, else into **kwargs (when
// non-null); the unmatched ones are reported together.
void bind_named(Heap& heap, const FunctionObj& fn, CallArgs& args, Frame& frame, DictObj* kwargs,
                std::vector<bool>& bound) {
  const auto& params = fn.def->params;
  std::string extra;
  for (auto& [name, value] : args.named) {
    size_t k = 0;
    for (; k < params.size(); ++k) {
      if (params[k].kind == Parameter::Kind::kNormal && params[k].name == name) break;
    }
    if (k < params.size()) {
      if (bound[k]) throw NativeError{"Argument `" + name + "` occurs more than once"};
      frame.slots[params[k].binding.slot] = value;
      bound[k] = true;
    } else if (kwargs) {
      Value key = heap.string(name);
      if (dict_get(*kwargs, key)) throw NativeError{"Argument `" + name + "` occurs more than once"};
      dict_set(heap, *kwargs, key, value);
    } else {
      extra += (extra.empty() ? "`" : ", `") + name + "`";
    }
  }
  if (!extra.empty()) throw NativeError{"Found " + extra + " extra named parameter(s) for call to " + fn.qualified_name};
}

// Unbound normal parameters take their default; one without a default is missing.
void bind_defaults(const FunctionObj& fn, Frame& frame, const std::vector<bool>& bound) {
  const auto& params = fn.def->params;
  for (size_t i = 0; i < params.size(); ++i) {
    if (bound[i] || params[i].kind != Parameter::Kind::kNormal) continue;
    if (fn.defaults[i].is(Type::kUnbound)) {
      throw NativeError{"Missing parameter `" + params[i].name + "` for call to `" + fn.qualified_name + "`"};
    }
    frame.slots[params[i].binding.slot] = fn.defaults[i];
  }
}

void bind_arguments(Heap& heap, const FunctionObj& fn, CallArgs& args, Frame& frame) {
  const auto& params = fn.def->params;
  int star_index = -1, kwargs_index = -1;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].kind == Parameter::Kind::kStar) star_index = static_cast<int>(i);
    if (params[i].kind == Parameter::Kind::kStarStar) kwargs_index = static_cast<int>(i);
  }
  std::vector<bool> bound(params.size(), false);
  bind_positional(heap, fn, args, frame, star_index, bound);
  DictObj* kwargs = nullptr;
  if (kwargs_index >= 0) {
    kwargs = heap.make<DictObj>();
    frame.slots[params[kwargs_index].binding.slot] = Value::object(Type::kDict, kwargs);
    bound[kwargs_index] = true;
  }
  bind_named(heap, fn, args, frame, kwargs, bound);
  bind_defaults(fn, frame, bound);
}

}  // namespace

Evaluator::DepthGuard::DepthGuard(Evaluator* e, Span span) : ev(e) {
  if (++ev->depth_ > ev->limits_.max_eval_depth) {
    --ev->depth_;
    ev->fail_at(span, "Starlark evaluation nested too deeply (limit " + std::to_string(ev->limits_.max_eval_depth) + ")");
  }
}

Evaluator::Evaluator(const ParsedModule& module, std::vector<Value> globals, const EvalLimits& limits, Heap& heap)
    : module_(module), globals_(std::move(globals)), limits_(limits), heap_(heap) {
  module_frame_.slots.assign(module.module_slot_count + module.module_scratch_slots, Value::unbound());
  module_name_ = module.source->name();
  function_names_.push_back("<module>");
}

std::string Evaluator::current_call_location() const {
  Span site = call_stack_.empty() ? Span{} : call_stack_.back().call_site;
  LineCol pos = module_.source->position(site.begin);
  return module_name_ + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
}

void Evaluator::run() { exec_block(module_.statements, &module_frame_); }

void Evaluator::fail_at(Span span, const std::string& message) {
  Error e;
  e.kind = ErrorKind::kRuntime;
  e.message = message;
  e.span = span;
  e.traceback = call_stack_;
  e.source = module_.source;
  throw e;
}

void Evaluator::step(Span span) {
  if (++steps_ > limits_.max_steps) {
    fail_at(span, "Starlark step budget exceeded (limit " + std::to_string(limits_.max_steps) + " steps)");
  }
}

void Evaluator::charge_steps(uint64_t n) {
  steps_ += n;
  if (steps_ > limits_.max_steps) {
    throw NativeError{"Starlark step budget exceeded (limit " + std::to_string(limits_.max_steps) + " steps)"};
  }
}

// ---- statements ----

Evaluator::Flow Evaluator::exec_block(const std::vector<Stmt*>& block, Frame* frame) {
  for (const Stmt* s : block) {
    Flow flow = exec(s, frame);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Evaluator::Flow Evaluator::exec(const Stmt* s, Frame* frame) {
  DepthGuard guard(this, s->span);
  step(s->span);
  switch (s->kind) {
    case StmtKind::kExpr: eval(s->value, frame); return Flow::kNormal;
    case StmtKind::kAssign: assign(s->target, eval(s->value, frame), frame, s->span); return Flow::kNormal;
    case StmtKind::kAugAssign: {
      const Expr* t = s->target;
      if (t->kind == ExprKind::kIdentifier) {
        Value current = load(t, frame);
        Value rhs = eval(s->value, frame);
        try {
          if (s->aug_op == BinaryOp::kAdd && current.is(Type::kList) && rhs.is(Type::kList)) {
            // x += y extends a list in place, as in Starlark.
            ListObj* l = list_of(current);
            check_mutable(*l);
            std::vector<Value> extra = list_of(rhs)->items;
            heap_.charge(extra.size() * sizeof(Value));
            l->items.insert(l->items.end(), extra.begin(), extra.end());
            store(t->binding, current, frame);
          } else {
            store(t->binding, binary_op(*this, s->aug_op, current, rhs), frame);
          }
        } catch (NativeError& e) {
          fail_at(s->span, e.message);
        }
        return Flow::kNormal;
      }
      if (t->kind == ExprKind::kIndex) {
        Value object = eval(t->a, frame);
        Value index = eval(t->b, frame);
        Value rhs = eval(s->value, frame);
        try {
          Value current = index_value(*this, object, index);
          set_index(*this, object, index, binary_op(*this, s->aug_op, current, rhs));
        } catch (NativeError& e) {
          fail_at(s->span, e.message);
        }
        return Flow::kNormal;
      }
      Value object = eval(t->a, frame);
      fail_at(t->span, "Operation `." + t->name + "=` not supported on type `" + type_name(object) + "`");
    }
    case StmtKind::kDef: store(s->def_binding, make_function(s->function, frame), frame); return Flow::kNormal;
    case StmtKind::kIf:
      if (truthy(eval(s->value, frame))) return exec_block(s->body, frame);
      return exec_block(s->orelse, frame);
    case StmtKind::kFor: {
      Flow flow = Flow::kNormal;
      exec_for(s, frame, &flow);
      return flow;
    }
    case StmtKind::kReturn:
      return_value_ = s->value ? eval(s->value, frame) : Value::none();
      return Flow::kReturn;
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
    case StmtKind::kPass: return Flow::kNormal;
    case StmtKind::kLoad:
      fail_at(s->span, "No imports are available, you tried `" + s->module + "` (no call to `Evaluator.set_loader`)");
  }
  return Flow::kNormal;
}

template <typename F>
void Evaluator::for_each_item(const Value& iterable, F&& body) {
  IterationLock lock(iterable);
  switch (iterable.type()) {
    case Type::kList:
    case Type::kTuple: {
      const std::vector<Value>& items = *sequence_items(iterable);
      for (size_t i = 0; i < items.size(); ++i) {
        if (!body(items[i])) return;
      }
      return;
    }
    case Type::kDict: {
      const auto& entries = dict_of(iterable)->entries;
      for (size_t i = 0; i < entries.size(); ++i) {
        if (!body(entries[i].first)) return;
      }
      return;
    }
    case Type::kRange: {
      const RangeObj* r = range_of(iterable);
      int64_t n = r->length();
      for (int64_t i = 0; i < n; ++i) {
        if (!body(Value::integer(r->at(i)))) return;
      }
      return;
    }
    default: throw NativeError{"Operation `(iter)` not supported on type `" + type_name(iterable) + "`"};
  }
}

void Evaluator::exec_for(const Stmt* s, Frame* frame, Flow* flow) {
  Value iterable = eval(s->value, frame);
  if (!iterable.is(Type::kList) && !iterable.is(Type::kTuple) && !iterable.is(Type::kDict) && !iterable.is(Type::kRange)) {
    fail_at(s->span, "Operation `(iter)` not supported on type `" + type_name(iterable) + "`");
  }
  for_each_item(iterable, [&](const Value& item) {
    step(s->span);
    assign(s->target, item, frame, s->span);
    Flow f = exec_block(s->body, frame);
    if (f == Flow::kBreak) return false;
    if (f == Flow::kReturn) {
      *flow = Flow::kReturn;
      return false;
    }
    return true;
  });
}

void Evaluator::assign(const Expr* target, const Value& value, Frame* frame, Span stmt_span) {
  switch (target->kind) {
    case ExprKind::kIdentifier: store(target->binding, value, frame); return;
    case ExprKind::kTuple:
    case ExprKind::kList: {
      std::vector<Value> items;
      try {
        if (const auto* seq = sequence_items(value)) {
          items = *seq;
        } else if (value.is(Type::kDict) || value.is(Type::kRange)) {
          for_each_item(value, [&](const Value& v) {
            items.push_back(v);
            return items.size() <= target->items.size();
          });
        } else {
          throw NativeError{"Operation `(iter)` not supported on type `" + type_name(value) + "`"};
        }
      } catch (NativeError& e) {
        fail_at(target->span, e.message);
      }
      if (items.size() != target->items.size()) {
        fail_at(target->span, "Unpacked " + std::to_string(items.size()) + " values but expected " +
                                  std::to_string(target->items.size()));
      }
      for (size_t i = 0; i < items.size(); ++i) assign(target->items[i], items[i], frame, stmt_span);
      return;
    }
    case ExprKind::kIndex: {
      Value object = eval(target->a, frame);
      Value index = eval(target->b, frame);
      try {
        set_index(*this, object, index, value);
      } catch (NativeError& e) {
        fail_at(target->span, e.message);
      }
      return;
    }
    case ExprKind::kDot: {
      Value object = eval(target->a, frame);
      fail_at(target->span, "Operation `." + target->name + "=` not supported on type `" + type_name(object) + "`");
    }
    default: fail_at(target->span, "invalid assignment target");
  }
}

void Evaluator::store(const Binding& b, const Value& value, Frame* frame) {
  switch (b.scope) {
    case Binding::Scope::kLocal: frame->slots[b.slot] = value; return;
    case Binding::Scope::kModule: module_frame_.slots[b.slot] = value; return;
    case Binding::Scope::kFree: {
      Frame* f = frame;
      for (uint32_t i = 0; i < b.depth && f; ++i) f = f->parent;
      if (f) f->slots[b.slot] = value;
      return;
    }
    default: return;
  }
}

Value Evaluator::load(const Expr* ident, Frame* frame) {
  const Binding& b = ident->binding;
  const Value* v = nullptr;
  switch (b.scope) {
    case Binding::Scope::kLocal: v = &frame->slots[b.slot]; break;
    case Binding::Scope::kModule: v = &module_frame_.slots[b.slot]; break;
    case Binding::Scope::kGlobal: v = &globals_[b.slot]; break;
    case Binding::Scope::kFree: {
      Frame* f = frame;
      for (uint32_t i = 0; i < b.depth && f; ++i) f = f->parent;
      if (f) v = &f->slots[b.slot];
      break;
    }
    case Binding::Scope::kUnresolved: break;
  }
  if (!v || v->is(Type::kUnbound)) fail_at(ident->span, "Local variable `" + ident->name + "` referenced before assignment");
  return *v;
}

// ---- expressions ----

Value Evaluator::eval(const Expr* e, Frame* frame) {
  DepthGuard guard(this, e->span);
  step(e->span);
  try {
    return eval_inner(e, frame);
  } catch (NativeError& error) {
    fail_at(e->span, error.message);
  }
}

Value Evaluator::eval_inner(const Expr* e, Frame* frame) {
  switch (e->kind) {
    case ExprKind::kIdentifier: return load(e, frame);
    case ExprKind::kNone: return Value::none();
    case ExprKind::kInt: return Value::integer(e->int_value);
    case ExprKind::kFloat: return Value::floating(e->float_value);
    case ExprKind::kString: return eval_string_literal(e);
    case ExprKind::kFString: return eval_fstring(e, frame);
    case ExprKind::kList:
    case ExprKind::kTuple: return eval_sequence(e, frame);
    case ExprKind::kDict: return eval_dict(e, frame);
    case ExprKind::kListComp:
    case ExprKind::kDictComp: return eval_comprehension(e, frame);
    case ExprKind::kUnary: return unary_op(e->unary_op, eval(e->a, frame));
    case ExprKind::kNot: return Value::boolean(!truthy(eval(e->a, frame)));
    case ExprKind::kBinary: {
      Value a = eval(e->a, frame);
      Value b = eval(e->b, frame);
      return binary_op(*this, e->binary_op, a, b);
    }
    case ExprKind::kAnd: {
      Value a = eval(e->a, frame);
      return truthy(a) ? eval(e->b, frame) : a;
    }
    case ExprKind::kOr: {
      Value a = eval(e->a, frame);
      return truthy(a) ? a : eval(e->b, frame);
    }
    case ExprKind::kConditional: return truthy(eval(e->a, frame)) ? eval(e->b, frame) : eval(e->c, frame);
    case ExprKind::kLambda: return make_function(e->function, frame);
    case ExprKind::kCall: return eval_call(e, frame);
    case ExprKind::kIndex: {
      Value object = eval(e->a, frame);
      Value index = eval(e->b, frame);
      return index_value(*this, object, index);
    }
    case ExprKind::kSlice: return eval_slice(e, frame);
    case ExprKind::kDot: return eval_attribute(e, frame);
  }
  return Value::none();
}

// A string literal's value is made once per expression and reused, so a literal in a loop
// does not allocate on every iteration.
Value Evaluator::eval_string_literal(const Expr* e) {
  auto it = string_constants_.find(e);
  if (it != string_constants_.end()) return it->second;
  Value v = heap_.string(e->name);
  string_constants_.emplace(e, v);
  return v;
}

Value Evaluator::eval_fstring(const Expr* e, Frame* frame) {
  std::string out;
  for (const FStringPart& part : e->fstring) {
    out += part.literal;
    if (part.expr) {
      Value v = eval(part.expr, frame);
      out += part.conversion == 'r' ? repr(v) : to_str(v);
    }
  }
  heap_.charge(out.size());
  return heap_.string(std::move(out));
}

Value Evaluator::eval_sequence(const Expr* e, Frame* frame) {
  std::vector<Value> items;
  items.reserve(e->items.size());
  for (const Expr* item : e->items) items.push_back(eval(item, frame));
  return e->kind == ExprKind::kList ? heap_.list(std::move(items)) : heap_.tuple(std::move(items));
}

// {k: v, ...}: items alternate key, value; a bad key is reported at the key.
Value Evaluator::eval_dict(const Expr* e, Frame* frame) {
  auto* d = heap_.make<DictObj>();
  for (size_t i = 0; i + 1 < e->items.size(); i += 2) {
    Value key = eval(e->items[i], frame);
    Value value = eval(e->items[i + 1], frame);
    try {
      dict_set(heap_, *d, key, value);
    } catch (NativeError& error) {
      fail_at(e->items[i]->span, error.message);
    }
  }
  return Value::object(Type::kDict, d);
}

// object[b:c:d]; omitted bounds reach slice_value as nullptr.
Value Evaluator::eval_slice(const Expr* e, Frame* frame) {
  Value object = eval(e->a, frame);
  Value start, stop, step_value;
  if (e->b) start = eval(e->b, frame);
  if (e->c) stop = eval(e->c, frame);
  if (e->d) step_value = eval(e->d, frame);
  return slice_value(*this, object, e->b ? &start : nullptr, e->c ? &stop : nullptr, e->d ? &step_value : nullptr);
}

// object.name: only methods exist (no user-defined attributes).
Value Evaluator::eval_attribute(const Expr* e, Frame* frame) {
  Value object = eval(e->a, frame);
  Value method = bind_method(*this, object, e->name);
  if (method.is(Type::kUnbound)) {
    throw NativeError{"Object of type `" + type_name(object) + "` has no attribute `" + e->name + "`"};
  }
  return method;
}

Value Evaluator::eval_comprehension(const Expr* e, Frame* frame) {
  Value result;
  if (e->kind == ExprKind::kListComp) {
    result = heap_.list({});
  } else {
    result = Value::object(Type::kDict, heap_.make<DictObj>());
  }
  comprehension_clause(e, 0, frame, result);
  return result;
}

void Evaluator::comprehension_clause(const Expr* e, size_t index, Frame* frame, Value& result) {
  DepthGuard guard(this, e->span);
  if (index == e->clauses.size()) {
    if (e->kind == ExprKind::kListComp) {
      Value v = eval(e->a, frame);
      heap_.charge(sizeof(Value));
      list_of(result)->items.push_back(v);
    } else {
      Value k = eval(e->a, frame);
      Value v = eval(e->b, frame);
      try {
        dict_set(heap_, *dict_of(result), k, v);
      } catch (NativeError& error) {
        fail_at(e->a->span, error.message);
      }
    }
    return;
  }
  const ComprehensionClause& c = e->clauses[index];
  if (!c.is_for) {
    if (truthy(eval(c.condition, frame))) comprehension_clause(e, index + 1, frame, result);
    return;
  }
  Value iterable = eval(c.iterable, frame);
  try {
    for_each_item(iterable, [&](const Value& item) {
      step(c.iterable->span);
      assign(c.target, item, frame, c.target->span);
      comprehension_clause(e, index + 1, frame, result);
      return true;
    });
  } catch (NativeError& error) {
    fail_at(c.iterable->span, error.message);
  }
}

Value Evaluator::make_function(const FunctionDef* def, Frame* frame) {
  auto* fn = heap_.make<FunctionObj>();
  fn->def = def;
  fn->closure = frame == &module_frame_ ? nullptr : frame;
  fn->qualified_name = def->name == "lambda" ? "lambda" : module_name_ + "." + def->name;
  fn->defaults.resize(def->params.size(), Value::unbound());
  for (size_t i = 0; i < def->params.size(); ++i) {
    if (def->params[i].default_value) fn->defaults[i] = eval(def->params[i].default_value, frame);
  }
  return Value::object(Type::kFunction, fn);
}

Value Evaluator::eval_call(const Expr* e, Frame* frame) {
  Value callee = eval(e->a, frame);
  CallArgs args;
  for (const Argument& a : e->args) {
    Value v = eval(a.value, frame);
    switch (a.kind) {
      case Argument::Kind::kPositional: args.positional.push_back(v); break;
      case Argument::Kind::kNamed: args.named.emplace_back(a.name, v); break;
      case Argument::Kind::kStar:
        try {
          for_each_item(v, [&](const Value& item) {
            args.positional.push_back(item);
            return true;
          });
        } catch (NativeError& error) {
          fail_at(a.span, error.message);
        }
        break;
      case Argument::Kind::kStarStar:
        if (!v.is(Type::kDict)) fail_at(a.span, "Operation `**kwargs` not supported on type `" + type_name(v) + "`");
        for (const auto& [k, val] : dict_of(v)->entries) {
          if (!k.is(Type::kString)) fail_at(a.span, "Operation `**kwargs` not supported on type `dict` with non-string keys");
          for (const auto& [name, unused] : args.named) {
            if (name == str_of(k)) fail_at(a.span, "Argument `" + name + "` occurs more than once");
          }
          args.named.emplace_back(str_of(k), val);
        }
        break;
    }
  }
  charge_steps(args.positional.size() / 8);
  call_stack_.push_back({e->span, function_names_.back()});
  struct Pop {
    ~Pop() { stack->pop_back(); }
    std::vector<CallFrame>* stack;
  } pop{&call_stack_};
  try {
    return call_value(callee, args, e->span);
  } catch (NativeError& error) {
    fail_at(e->span, error.message);
  }
}

Value Evaluator::call(const Value& callee, CallArgs& args) {
  Span site = call_stack_.empty() ? Span{} : call_stack_.back().call_site;
  return call_value(callee, args, site);
}

Value Evaluator::call_value(const Value& callee, CallArgs& args, Span site) {
  (void)site;
  switch (callee.type()) {
    case Type::kNative: return static_cast<NativeObj*>(callee.as_object())->fn(*this, args);
    case Type::kBoundMethod: {
      auto* m = static_cast<BoundMethodObj*>(callee.as_object());
      return m->method(*this, m->receiver, args);
    }
    case Type::kFunction: return call_function(static_cast<FunctionObj*>(callee.as_object()), args);
    default: throw NativeError{"Operation `call()` not supported on type `" + type_name(callee) + "`"};
  }
}

Value Evaluator::call_function(FunctionObj* fn, CallArgs& args) {
  if (static_cast<int>(function_names_.size()) > limits_.max_call_depth) throw NativeError{"Starlark call stack overflow"};
  const FunctionDef* def = fn->def;
  Frame local_frame;
  Frame* frame = &local_frame;
  if (def->creates_closures) {
    // Closures may outlive the call, so their frame lives on the Starlark heap.
    frame = heap_.make<Frame>(def->slot_count * sizeof(Value));
  } else {
    heap_.charge(0);  // frames on the C++ stack cost nothing on the heap
  }
  frame->slots.assign(def->slot_count, Value::unbound());
  frame->parent = fn->closure;
  bind_arguments(heap_, *fn, args, *frame);

  function_names_.push_back(def->name);
  struct Pop {
    ~Pop() { names->pop_back(); }
    std::vector<std::string>* names;
  } pop{&function_names_};
  if (def->lambda_body) return eval(def->lambda_body, frame);
  Flow flow = exec_block(def->body, frame);
  if (flow == Flow::kReturn) {
    Value v = return_value_;
    return_value_ = Value::none();
    return v;
  }
  return Value::none();
}

}  // namespace codexd::starlark
