// Operations on values shared by the evaluator and the builtins: repr/str, equality,
// ordering, hashing, dict access, float formatting. Errors are thrown as NativeError and
// located by the caller. Recursive walks are depth-bounded (values can nest or be cyclic).
#pragma once

#include <optional>
#include <string>

#include "policies/starlark/value.h"

namespace codexd::starlark {

std::string repr(const Value& v);
std::string to_str(const Value& v);  // str(): strings unquoted, everything else repr
std::string repr_string(std::string_view s);
std::string format_float(double d);

bool equals(const Value& a, const Value& b);
// <0, 0, >0. Throws for incomparable types ("compare" / "cmp()" message variants).
int compare(const Value& a, const Value& b, const char* op_name = "compare");
uint64_t hash_value(const Value& v);

std::optional<Value> dict_get(const DictObj& d, const Value& key);
void dict_set(Heap& heap, DictObj& d, const Value& key, const Value& value);
bool dict_remove(DictObj& d, const Value& key, Value* removed);
void check_mutable(const ListObj& l);
void check_mutable(const DictObj& d);

// "int (repr: 1)", used in parameter type errors.
std::string describe_for_type_error(const Value& v);
[[noreturn]] void throw_type_mismatch(const std::string& param, const std::string& expected, const Value& actual);

// Checked int64 arithmetic.
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_sub(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);

}  // namespace codexd::starlark
