// Runtime values. Heap objects (strings, lists, dicts, functions...) are owned by the Heap of
// one evaluation and freed together when it ends: rules files are small, so there is no
// garbage collector, and cycles (a list appended to itself) are harmless. The Heap charges
// every allocation against a byte budget so hostile files cannot exhaust memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace codexd::starlark {

struct FunctionDef;
struct Frame;
class Evaluator;

enum class Type : uint8_t {
  kUnbound,  // internal: a variable not yet assigned
  kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict, kFunction, kNative, kBoundMethod, kRange,
};

struct Object {
  virtual ~Object() = default;
};

class Value {
 public:
  Value() : type_(Type::kNone) { i_ = 0; }
  static Value unbound() { Value v; v.type_ = Type::kUnbound; return v; }
  static Value none() { return Value(); }
  static Value boolean(bool b) { Value v; v.type_ = Type::kBool; v.i_ = b; return v; }
  static Value integer(int64_t i) { Value v; v.type_ = Type::kInt; v.i_ = i; return v; }
  static Value floating(double f) { Value v; v.type_ = Type::kFloat; v.f_ = f; return v; }
  static Value object(Type t, Object* o) { Value v; v.type_ = t; v.o_ = o; return v; }

  Type type() const { return type_; }
  bool is(Type t) const { return type_ == t; }
  bool as_bool() const { return i_ != 0; }
  int64_t as_int() const { return i_; }
  double as_float() const { return f_; }
  Object* as_object() const { return o_; }

 private:
  Type type_;
  union {
    int64_t i_;
    double f_;
    Object* o_;
  };
};

struct StringObj : Object {
  std::string text;
};

struct ListObj : Object {
  std::vector<Value> items;
  int iterating = 0;  // > 0 while a for loop walks it: mutation is an error then
};

struct TupleObj : Object {
  std::vector<Value> items;
};

// Insertion-ordered dict with a hash index.
struct DictObj : Object {
  std::vector<std::pair<Value, Value>> entries;
  std::unordered_multimap<uint64_t, uint32_t> index;  // hash -> entry position
  int iterating = 0;
};

struct RangeObj : Object {
  int64_t start = 0, stop = 0, step = 1;
  int64_t length() const;
  int64_t at(int64_t i) const { return start + i * step; }
};

// Arguments of a call after *args / **kwargs expansion.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
};

using NativeFunction = std::function<Value(Evaluator&, CallArgs&)>;

struct NativeObj : Object {
  std::string name;
  NativeFunction fn;
};

struct FunctionObj : Object {
  const FunctionDef* def = nullptr;
  std::vector<Value> defaults;  // one per parameter (unbound when none)
  Frame* closure = nullptr;     // frame the function was defined in (null at module level)
  std::string qualified_name;   // "file.f" as Codex prints it
};

struct BoundMethodObj : Object {
  Value receiver;
  std::string name;
  Value (*method)(Evaluator&, Value receiver, CallArgs&) = nullptr;
};

struct Frame : Object {
  std::vector<Value> slots;
  Frame* parent = nullptr;
};

// Thrown by native code for errors located at the current call.
struct NativeError {
  std::string message;
};

class Heap {
 public:
  explicit Heap(size_t byte_limit) : limit_(byte_limit) {}
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  // Charges `bytes` against the budget; throws NativeError when it is exhausted.
  void charge(size_t bytes);
  size_t used() const { return used_; }
  // Frees every object and resets the budget, keeping the bookkeeping's capacity: a caller
  // that evaluates many independent calls reuses one Heap (no Value of before may be used).
  void clear() {
    objects_.clear();
    used_ = 0;
  }

  template <typename T>
  T* make(size_t payload_bytes = 0) {
    charge(sizeof(T) + payload_bytes);
    auto owned = std::make_unique<T>();
    T* raw = owned.get();
    objects_.push_back(std::move(owned));
    return raw;
  }

  Value string(std::string text);
  Value list(std::vector<Value> items);
  Value tuple(std::vector<Value> items);

 private:
  std::vector<std::unique_ptr<Object>> objects_;
  size_t used_ = 0;
  size_t limit_;
};

// Accessors (the caller checks the type first).
inline const std::string& str_of(const Value& v) { return static_cast<StringObj*>(v.as_object())->text; }
inline ListObj* list_of(const Value& v) { return static_cast<ListObj*>(v.as_object()); }
inline TupleObj* tuple_of(const Value& v) { return static_cast<TupleObj*>(v.as_object()); }
inline DictObj* dict_of(const Value& v) { return static_cast<DictObj*>(v.as_object()); }
inline RangeObj* range_of(const Value& v) { return static_cast<RangeObj*>(v.as_object()); }

// Starlark type name as used in messages: "string", "list", "NoneType", "function"...
std::string type_name(const Value& v);
bool truthy(const Value& v);
// Items of a list or tuple (nullptr otherwise).
const std::vector<Value>* sequence_items(const Value& v);

}  // namespace codexd::starlark
