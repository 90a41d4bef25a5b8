#include "policies/starlark/resolver.h"

#include <vector>

namespace codexd::starlark {
namespace {

// Slots of one runtime frame: the module frame or one function call's frame.
struct FrameInfo {
  uint32_t level = 0;  // 0: module
  uint32_t next_slot = 0;
};

struct Scope {
  FrameInfo* frame;
  std::unordered_map<std::string, uint32_t> names;
};

class Resolver {
 public:
  Resolver(ParsedModule& module, const std::unordered_map<std::string, uint32_t>& globals)
      : module_(module), globals_(globals) {}

  void run() {
    FrameInfo module_frame;
    Scope module_scope{&module_frame, {}};
    // Module-level bindings come from the whole file, so later assignments shadow builtins
    // everywhere (Starlark's static scoping).
    std::vector<std::string> names;
    collect_bindings(module_.statements, names);
    for (const std::string& n : names) {
      if (!module_scope.names.count(n)) {
        module_scope.names.emplace(n, module_frame.next_slot++);
        module_.module_slot_names.push_back(n);
      }
    }
    module_.module_slot_count = module_frame.next_slot;
    scopes_.push_back(&module_scope);
    frame_ = &module_frame;
    resolve_block(module_.statements);
    scopes_.pop_back();
    module_.module_scratch_slots = module_frame.next_slot - module_.module_slot_count;
  }

 private:
  // Names bound by a block of statements, not looking into nested functions.
  static void collect_bindings(const std::vector<Stmt*>& block, std::vector<std::string>& out) {
    for (const Stmt* s : block) {
      switch (s->kind) {
        case StmtKind::kAssign:
        case StmtKind::kAugAssign: collect_target(s->target, out); break;
        case StmtKind::kFor:
          collect_target(s->target, out);
          collect_bindings(s->body, out);
          break;
        case StmtKind::kIf:
          collect_bindings(s->body, out);
          collect_bindings(s->orelse, out);
          break;
        case StmtKind::kDef: out.push_back(s->function->name); break;
        case StmtKind::kLoad:
          for (const LoadBinding& b : s->loads) out.push_back(b.local_name);
          break;
        default: break;
      }
    }
  }

  static void collect_target(const Expr* target, std::vector<std::string>& out) {
    if (target->kind == ExprKind::kIdentifier) {
      out.push_back(target->name);
    } else if (target->kind == ExprKind::kTuple || target->kind == ExprKind::kList) {
      for (const Expr* item : target->items) collect_target(item, out);
    }
  }

  [[noreturn]] void not_found(const Expr* e) {
    Error error;
    error.kind = ErrorKind::kResolve;
    error.message = "Variable `" + e->name + "` not found";
    error.span = e->span;
    error.source = module_.source;
    throw error;
  }

  Binding lookup(const std::string& name, const Expr* where) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = (*it)->names.find(name);
      if (found == (*it)->names.end()) continue;
      Binding b;
      b.slot = found->second;
      FrameInfo* owner = (*it)->frame;
      if (owner->level == 0) {
        b.scope = Binding::Scope::kModule;
      } else if (owner == frame_) {
        b.scope = Binding::Scope::kLocal;
      } else {
        b.scope = Binding::Scope::kFree;
        b.depth = frame_->level - owner->level;
      }
      return b;
    }
    auto g = globals_.find(name);
    if (g == globals_.end()) not_found(where);
    Binding b;
    b.scope = Binding::Scope::kGlobal;
    b.slot = g->second;
    return b;
  }

  void resolve_block(const std::vector<Stmt*>& block) {
    for (Stmt* s : block) resolve_stmt(s);
  }

  void resolve_stmt(Stmt* s) {
    switch (s->kind) {
      case StmtKind::kExpr:
      case StmtKind::kReturn:
        if (s->value) resolve_expr(s->value);
        break;
      case StmtKind::kAssign:
        resolve_expr(s->value);
        resolve_target(s->target);
        break;
      case StmtKind::kAugAssign:
        resolve_expr(s->target);
        resolve_expr(s->value);
        break;
      case StmtKind::kIf:
        resolve_expr(s->value);
        resolve_block(s->body);
        resolve_block(s->orelse);
        break;
      case StmtKind::kFor:
        resolve_expr(s->value);
        resolve_target(s->target);
        resolve_block(s->body);
        break;
      case StmtKind::kDef: {
        for (Parameter& p : s->function->params) {
          if (p.default_value) resolve_expr(p.default_value);
        }
        Expr fake;
        fake.kind = ExprKind::kIdentifier;
        fake.name = s->function->name;
        fake.span = s->span;
        s->def_binding = lookup(s->function->name, &fake);
        resolve_function(s->function);
        break;
      }
      case StmtKind::kLoad:
        for (LoadBinding& b : s->loads) {
          Expr fake;
          fake.kind = ExprKind::kIdentifier;
          fake.name = b.local_name;
          fake.span = b.span;
          b.binding = lookup(b.local_name, &fake);
        }
        break;
      case StmtKind::kBreak:
      case StmtKind::kContinue:
      case StmtKind::kPass: break;
    }
  }

  void resolve_function(FunctionDef* fn) {
    if (current_fn_) current_fn_->creates_closures = true;
    FunctionDef* saved_fn = current_fn_;
    current_fn_ = fn;
    FrameInfo frame;
    frame.level = frame_->level + 1;
    Scope scope{&frame, {}};
    for (Parameter& p : fn->params) {
      if (p.name.empty()) continue;
      p.binding.scope = Binding::Scope::kLocal;
      p.binding.slot = frame.next_slot;
      scope.names.emplace(p.name, frame.next_slot++);
    }
    std::vector<std::string> names;
    collect_bindings(fn->body, names);
    for (const std::string& n : names) {
      if (!scope.names.count(n)) scope.names.emplace(n, frame.next_slot++);
    }
    FrameInfo* saved_frame = frame_;
    std::vector<Scope*> saved_scopes = scopes_;
    frame_ = &frame;
    scopes_.push_back(&scope);
    if (fn->lambda_body) {
      resolve_expr(fn->lambda_body);
    } else {
      resolve_block(fn->body);
    }
    scopes_ = std::move(saved_scopes);
    frame_ = saved_frame;
    current_fn_ = saved_fn;
    fn->slot_count = frame.next_slot;
  }

  void resolve_target(Expr* target) {
    switch (target->kind) {
      case ExprKind::kIdentifier: target->binding = lookup(target->name, target); break;
      case ExprKind::kTuple:
      case ExprKind::kList:
        for (Expr* item : target->items) resolve_target(item);
        break;
      default: resolve_expr(target); break;  // a[i] = ..., a.b = ...
    }
  }

  void resolve_comprehension(Expr* e) {
    // Each comprehension is a scope of its own; its variables get fresh slots in the
    // current frame. The first iterable is evaluated in the enclosing scope.
    Scope scope{frame_, {}};
    e->scope_slots_begin = frame_->next_slot;
    bool first = true;
    for (ComprehensionClause& c : e->clauses) {
      if (c.is_for) {
        if (first) {
          resolve_expr(c.iterable);
          scopes_.push_back(&scope);
        } else {
          resolve_expr(c.iterable);
        }
        std::vector<std::string> names;
        collect_target(c.target, names);
        for (const std::string& n : names) {
          if (!scope.names.count(n)) scope.names.emplace(n, frame_->next_slot++);
        }
        resolve_target(c.target);
        first = false;
      } else {
        resolve_expr(c.condition);
      }
    }
    resolve_expr(e->a);
    if (e->b) resolve_expr(e->b);
    scopes_.pop_back();
  }

  void resolve_expr(Expr* e) {
    switch (e->kind) {
      case ExprKind::kIdentifier: e->binding = lookup(e->name, e); return;
      case ExprKind::kNone:
      case ExprKind::kInt:
      case ExprKind::kFloat:
      case ExprKind::kString: return;
      case ExprKind::kFString:
        for (FStringPart& p : e->fstring) {
          if (p.expr) resolve_expr(p.expr);
        }
        return;
      case ExprKind::kListComp:
      case ExprKind::kDictComp: resolve_comprehension(e); return;
      case ExprKind::kLambda:
        for (Parameter& p : e->function->params) {
          if (p.default_value) resolve_expr(p.default_value);
        }
        resolve_function(e->function);
        return;
      case ExprKind::kCall:
        resolve_expr(e->a);
        for (Argument& a : e->args) resolve_expr(a.value);
        return;
      default: break;
    }
    if (e->a) resolve_expr(e->a);
    if (e->b) resolve_expr(e->b);
    if (e->c) resolve_expr(e->c);
    if (e->d) resolve_expr(e->d);
    for (Expr* item : e->items) resolve_expr(item);
  }

  ParsedModule& module_;
  const std::unordered_map<std::string, uint32_t>& globals_;
  std::vector<Scope*> scopes_;
  FrameInfo* frame_ = nullptr;
  FunctionDef* current_fn_ = nullptr;
};

}  // namespace

bool resolve_module(ParsedModule& module, const std::unordered_map<std::string, uint32_t>& global_index, Error& error) {
  try {
    Resolver(module, global_index).run();
    return true;
  } catch (Error& e) {
    error = std::move(e);
    return false;
  }
}

}  // namespace codexd::starlark
