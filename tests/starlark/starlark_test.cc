// Tests of codexd_starlark: lexer/parser/evaluator behaviour, every error class, and hostile
// inputs (deep nesting, huge values, invalid UTF-8, step budget).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "policies/starlark/module.h"
#include "policies/starlark/parser.h"
#include "policies/starlark/value_ops.h"

namespace codexd::starlark {
namespace {

// Runs `code`; `out(x)` records str(x) so tests can observe values.
struct RunOutput {
  EvalResult result;
  std::vector<std::string> out;
};

RunOutput run(const std::string& code, const EvalLimits& limits = {}) {
  RunOutput r;
  auto source = std::make_shared<SourceFile>("t.star", drop_carriage_returns(code));
  std::vector<Builtin> builtins = {{"out", [&r](Evaluator&, CallArgs& args) {
                                      for (const Value& v : args.positional) r.out.push_back(to_str(v));
                                      return Value::none();
                                    }}};
  r.result = eval_module(source, builtins, limits);
  return r;
}

std::string eval1(const std::string& expr) {
  RunOutput r = run("out(" + expr + ")\n");
  if (!r.result.ok) return "ERROR: " + r.result.error.message;
  return r.out.empty() ? "" : r.out[0];
}

std::string error_of(const std::string& code) {
  RunOutput r = run(code);
  return r.result.ok ? "" : r.result.error.message;
}

TEST(StarlarkLexer, StringEscapes) {
  EXPECT_EQ(eval1(R"(repr("\q\0\101\x41\u00e9\U0001F600\a\b\f\v\r\400\8"))"),
            R"("\\q\x00AA\xe9\U0001f600\x07\x08\x0c\x0b\rĀ\\8")");
  EXPECT_EQ(eval1(R"(r"a\nb")"), "a\\nb");
  EXPECT_EQ(eval1("\"\"\"a\nb\"\"\""), "a\nb");
  EXPECT_EQ(eval1("'it''s'" /* adjacent literals */).rfind("ERROR: Parse error", 0), 0u);
}

TEST(StarlarkLexer, CarriageReturnsAreDropped) {
  RunOutput r = run("x = \"cr\rinside\"\r\nout(x)\r\n");
  ASSERT_TRUE(r.result.ok) << r.result.error.message;
  EXPECT_EQ(r.out[0], "crinside");
}

TEST(StarlarkLexer, Rejections) {
  EXPECT_NE(error_of("if True:\n\tx = 1\n").find("tabs are not allowed"), std::string::npos);
  EXPECT_NE(error_of("x = 1\t# c\n").find("tabs are not allowed"), std::string::npos);
  EXPECT_NE(error_of("while True:\n  pass\n").find("reserved keyword `while`"), std::string::npos);
  EXPECT_NE(error_of("x = \"\\ud83d\"\n").find("invalid string escape sequence"), std::string::npos);
  EXPECT_NE(error_of("x = \"a\" \"b\"\n").find("Parse error"), std::string::npos);
  EXPECT_NE(error_of("\xEF\xBB\xBFx = 1\n").find("Parse error"), std::string::npos);
  EXPECT_NE(error_of("x = 017\n").find("leading 0"), std::string::npos);
  EXPECT_NE(error_of("x = 10**2\n").find("'**'"), std::string::npos);
  EXPECT_NE(error_of("x = 1,\n").find("trailing comma"), std::string::npos);
  EXPECT_NE(error_of("x = 1 < 2 < 3\n").find("not associative"), std::string::npos);
}

TEST(StarlarkEval, Basics) {
  EXPECT_EQ(eval1("[1, 2, 3][1:]"), "[2, 3]");
  EXPECT_EQ(eval1("\"héllo\"[1]"), "é");
  EXPECT_EQ(eval1("len(\"héllo\")"), "5");
  EXPECT_EQ(eval1("{\"a\": 1}.get(\"b\", 2)"), "2");
  EXPECT_EQ(eval1("[x * x for x in range(4) if x % 2 == 0]"), "[0, 4]");
  EXPECT_EQ(eval1("{k: v for k, v in [(\"a\", 1)]}"), "{\"a\": 1}");
  EXPECT_EQ(eval1("\"%s-%d-%r\" % (\"a\", 3, \"b\")"), "a-3-\"b\"");
  EXPECT_EQ(eval1("\"{} {x}\".format(1, x=2)"), "1 2");
  EXPECT_EQ(eval1("f\"a{1 + 1}b{{c}}\""), "a2b{c}");
  EXPECT_EQ(eval1("(lambda a, b=2: a + b)(1)"), "3");
  EXPECT_EQ(eval1("sorted([3, 1, 2], reverse=True)"), "[3, 2, 1]");
  EXPECT_EQ(eval1("\" / \".join([\"user\", \"group\"])"), "user / group");
  EXPECT_EQ(eval1("-7 // 2"), "-4");
  EXPECT_EQ(eval1("1e20"), "1e+20");
  EXPECT_EQ(eval1("2.0 / 3"), "0.6666666666666666");
  EXPECT_EQ(eval1("float(\"inf\")"), "+inf");
  EXPECT_EQ(eval1("hash(\"hello world\")"), "1794106052");
  EXPECT_EQ(eval1("type(range(2))"), "range");
  EXPECT_EQ(eval1("\"a b  c\".split()"), "[\"a\", \"b\", \"c\"]");
}

TEST(StarlarkEval, DefsLoopsAndUnpacking) {
  RunOutput r = run(R"(
def f(a, b=2, *args, **kw):
    return [a, b, args, kw]
out(f(1), f(1, 3, 4, k=5))
x = 0
for i in range(10):
    if i == 3:
        continue
    if i == 6:
        break
    x += i
out(x)
a, b = 1, 2
(c, d) = [3, 4]
out(a + b + c + d)
def outer():
    y = 5
    def inner():
        return y + 1
    return inner()
out(outer())
l = [1]
l += [2]
out(l)
)");
  ASSERT_TRUE(r.result.ok) << r.result.error.located_message();
  EXPECT_EQ(r.out, (std::vector<std::string>{"[1, 2, (), {}]", "[1, 3, (4,), {\"k\": 5}]", "12", "10", "6", "[1, 2]"}));
}

// Values and messages below were produced by Codex 0.169.0 itself
// (`codex execpolicy check` on `fail(repr(EXPR))` / `x = EXPR`), so these tables pin our
// evaluator to the real one.
TEST(StarlarkEval, BuiltinsAndMethodsMatchCodex) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\"Hello\".lower() + \"x\".upper()", "\"helloX\""},
      {"\"  pad  \".strip() + \"|\" + \"xxaxx\".lstrip(\"x\") + \"|\" + \"xxaxx\".rstrip(\"x\")", "\"pad|axx|xxa\""},
      {"\"a,b,,c\".split(\",\")", "[\"a\", \"b\", \"\", \"c\"]"},
      {"\"a,b,c\".split(\",\", 1)", "[\"a\", \"b,c\"]"},
      {"\"a,b,c\".rsplit(\",\", 1)", "[\"a,b\", \"c\"]"},
      {"\"line1\\nline2\\r\\nline3\".splitlines()", "[\"line1\", \"line2\", \"line3\"]"},
      {"\"hello\".replace(\"l\", \"L\", 1)", "\"heLlo\""},
      {"\"hello\".find(\"l\")", "2"},
      {"\"hello\".rfind(\"l\")", "3"},
      {"\"hello\".index(\"e\")", "1"},
      {"\"hello\".count(\"l\")", "2"},
      {"\"hello\".startswith((\"x\", \"he\"))", "True"},
      {"\"hello\".endswith(\"lo\")", "True"},
      {"\"abc\".isalpha()", "True"},
      {"\"a1\".isalnum()", "True"},
      {"\"123\".isdigit()", "True"},
      {"\"Hello World\".title()", "\"Hello World\""},
      {"\"hello\".capitalize()", "\"Hello\""},
      {"\"a-b-c\".partition(\"-\")", "(\"a\", \"-\", \"b-c\")"},
      {"\"a-b-c\".rpartition(\"-\")", "(\"a-b\", \"-\", \"c\")"},
      {"\"%x %o %e\" % (255, 8, 1.5)", "\"ff 10 1.500000e+00\""},
      {"\"{0}{1}{0}\".format(\"a\", \"b\")", "\"aba\""},
      {"\"x\".join([\"1\", \"2\", \"3\"])", "\"1x2x3\""},
      {"[1, 2, 3, 4, 5][::2]", "[1, 3, 5]"},
      {"[1, 2, 3, 4, 5][-2:]", "[4, 5]"},
      {"\"hello\"[::-1]", "\"olleh\""},
      {"(1, 2) + (3,)", "(1, 2, 3)"},
      {"[0] * 3", "[0, 0, 0]"},
      {"sorted({\"b\": 1, \"a\": 2}.items())", "[(\"a\", 2), (\"b\", 1)]"},
      {"{\"a\": 1, \"b\": 2}.keys()", "[\"a\", \"b\"]"},
      {"{\"a\": 1} | {\"b\": 2}", "{\"a\": 1, \"b\": 2}"},
      {"dict([(\"a\", 1)], b=2)", "{\"a\": 1, \"b\": 2}"},
      {"list(enumerate([\"x\", \"y\"]))", "[(0, \"x\"), (1, \"y\")]"},
      {"list(zip([1, 2], [\"a\", \"b\"]))", "[(1, \"a\"), (2, \"b\")]"},
      {"list(reversed([1, 2, 3]))", "[3, 2, 1]"},
      {"min([3, 1, 2]) + max(3, 7)", "8"},
      {"repr([1, \"a\", None, True, (1,)])", "\"[1, \\\"a\\\", None, True, (1,)]\""},
      {"sorted([\"b\", \"A\", \"a\"], key=lambda s: s.lower())", "[\"A\", \"a\", \"b\"]"},
      {"\"a{}b\".format([1, 2])", "\"a[1, 2]b\""},
      {"range(0, 10, 3)", "range(0, 10, 3)"},
      {"list(range(10, 0, -3))", "[10, 7, 4, 1]"},
  };
  for (const auto& [expr, want] : cases) EXPECT_EQ(eval1("repr(" + expr + ")"), want) << expr;
}

TEST(StarlarkErrors, ArgumentErrorsMatchCodex) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"len(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"str(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"int(1, 2, 3)", "Found 1 extra positional argument(s) for call to int"},
      {"type(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"bool(1, 2)", "Wrong number of positional arguments, expected between 0 and 1, got 2"},
      {"list(1, 2)", "Wrong number of positional arguments, expected between 0 and 1, got 2"},
      {"tuple(1, 2)", "Wrong number of positional arguments, expected between 0 and 1, got 2"},
      {"dict(1, 2)", "Wrong number of positional arguments, expected between 0 and 1, got 2"},
      {"sorted(1, 2)", "Found 1 extra positional argument(s) for call to sorted"},
      {"range(1, 2, 3, 4)", "Wrong number of positional arguments, expected between 1 and 3, got 4"},
      {"hasattr(1)", "Wrong number of positional arguments, expected 2, got 1"},
      {"getattr(1)", "Wrong number of positional arguments, expected between 2 and 3, got 1"},
      {"\"x\".upper(1)", "Wrong number of positional arguments, expected 0, got 1"},
      {"\"x\".split(1, 2, 3)", "Wrong number of positional arguments, expected between 0 and 2, got 3"},
      {"any(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"min()", "Argument is an empty iterable, max() expect a non empty iterable"},
      {"enumerate(1, 2, 3)", "Found 1 extra positional argument(s) for call to enumerate"},
      {"zip(x=1)", "Found `x` extra named parameter(s) for call to zip"},
      {"reversed(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"abs(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"hash(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"dir(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"repr()", "Wrong number of positional arguments, expected 1, got 0"},
      {"len()", "Wrong number of positional arguments, expected 1, got 0"},
      {"[].append(1, 2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"{}.get()", "Wrong number of positional arguments, expected between 1 and 2, got 0"},
      {"str(x=1)", "Found `x` extra named parameter(s) for call to function"},
      {"len(x=1)", "Found `x` extra named parameter(s) for call to function"},
      {"type(x=[])", "Found `x` extra named parameter(s) for call to function"},
      {"int(x=1)", "Found `x` extra named parameter(s) for call to int"},
      {"enumerate()", "Missing positional-only parameter `it` for call to `enumerate`"},
      {"sorted([1], 2)", "Found 1 extra positional argument(s) for call to sorted"},
      {"sorted()", "Missing positional-only parameter `x` for call to `sorted`"},
      {"\"a,b\".split(sep=\",\")", "Found `sep` extra named parameter(s) for call to function"},
      {"getattr(\"x\",\"upper\",1,2)", "Wrong number of positional arguments, expected between 2 and 3, got 4"},
      {"{}.update(1,2)", "Wrong number of positional arguments, expected between 0 and 1, got 2"},
      {"\"a\".replace(\"a\")", "Wrong number of positional arguments, expected between 2 and 3, got 1"},
      {"max()", "Argument is an empty iterable, max() expect a non empty iterable"},
      {"min([])", "Argument is an empty iterable, max() expect a non empty iterable"},
      {"chr(1,2)", "Wrong number of positional arguments, expected 1, got 2"},
      {"ord()", "Wrong number of positional arguments, expected 1, got 0"},
      {"float(1,2)", "Wrong number of positional arguments, expected between 0 and 1, got 2"},
      {"str()", "Wrong number of positional arguments, expected 1, got 0"},
      {"range()", "Wrong number of positional arguments, expected between 1 and 3, got 0"},
      {"len(1, x=2)", "Found `x` extra named parameter(s) for call to function"},
      {"\"ab\".splitlines(True, 1)", "Wrong number of positional arguments, expected between 0 and 1, got 2"},
      {"[1].insert(1)", "Wrong number of positional arguments, expected 2, got 1"},
      {"{}.pop()", "Missing positional-only parameter `key` for call to `pop`"},
      {"hasattr(x=1)", "Found `x` extra named parameter(s) for call to function"},
      {"bool(x=1)", "Found `x` extra named parameter(s) for call to function"},
      {"[1].pop(1, 2)", "Wrong number of positional arguments, expected between 0 and 1, got 2"},
      {"{}.setdefault()", "Wrong number of positional arguments, expected between 1 and 2, got 0"},
      {"\"x\".startswith()", "Wrong number of positional arguments, expected between 1 and 3, got 0"},
      {"\"x\".join()", "Wrong number of positional arguments, expected 1, got 0"},
      {"\"x\".count()", "Wrong number of positional arguments, expected between 1 and 3, got 0"},
  };
  for (const auto& [expr, want] : cases) EXPECT_EQ(error_of("x = " + expr + "\n"), want) << expr;
}

TEST(StarlarkResolve, UnknownNamesAreStatic) {
  RunOutput r = run("def never():\n    return undefined_thing\n");
  ASSERT_FALSE(r.result.ok);
  EXPECT_EQ(r.result.error.kind, ErrorKind::kResolve);
  EXPECT_EQ(r.result.error.message, "Variable `undefined_thing` not found");
  EXPECT_EQ(r.result.error.located_message(), "t.star:2:12: Variable `undefined_thing` not found");
  for (const char* name : {"print", "json", "struct", "set", "map", "filter", "isinstance"}) {
    EXPECT_EQ(error_of(std::string("x = ") + name + "\n"), std::string("Variable `") + name + "` not found");
  }
}

TEST(StarlarkResolve, ReassignedBuiltinIsLocalEverywhere) {
  EXPECT_EQ(error_of("x = len([])\nlen = None\n"), "Local variable `len` referenced before assignment");
  EXPECT_EQ(error_of("x = f\"{x}\"\n"), "Local variable `x` referenced before assignment");
  EXPECT_EQ(error_of("y = len\nout(y([1]))\n"), "");
}

TEST(StarlarkErrors, RuntimeMessages) {
  EXPECT_EQ(error_of("x = [\"a\"] + \"b\"\n"), "Operation `+` not supported for types `list` and `string`");
  EXPECT_EQ(error_of("x = 1 // 0\n"), "Floor division by zero: 1 // 0");
  EXPECT_EQ(error_of("fail(\"boom\", 1)\n"), "fail: boom 1");
  EXPECT_EQ(error_of("load(\"a.star\", \"b\")\n"), "No imports are available, you tried `a.star` (no call to `Evaluator.set_loader`)");
  EXPECT_EQ(error_of("x = [1][3]\n"), "Index `3` is out of bound");
  EXPECT_EQ(error_of("x = {}[\"k\"]\n"), "Key `\"k\"` was not found");
  EXPECT_EQ(error_of("a, b = [1, 2, 3]\n"), "Unpacked 3 values but expected 2");
  EXPECT_EQ(error_of("def f(a): pass\nf(1, 2)\n"), "Found 1 extra positional argument(s) for call to t.star.f");
  EXPECT_EQ(error_of("def f(a): pass\nf()\n"), "Missing parameter `a` for call to `t.star.f`");
  EXPECT_EQ(error_of("out(1, *[2], k=3)\n"), "named argument after *args or **kwargs");
  EXPECT_EQ(error_of("out(k=1, k=2)\n"), "repeated named argument");
  EXPECT_EQ(error_of("out(k=1, 2)\n"), "positional argument after non positional");
  EXPECT_EQ(error_of("x = [1]\nfor i in x:\n    x.append(2)\n"),
            "This operation mutates an iterable for an iterator while iterating.");
  EXPECT_EQ(error_of("for x in [1]:\n  pass\nbreak\n").rfind("Parse error", 0), 0u);
}

TEST(StarlarkErrors, TracebackAndSnippet) {
  RunOutput r = run("def f():\n    fail(\"deep\")\nf()\n");
  ASSERT_FALSE(r.result.ok);
  EXPECT_EQ(r.result.error.traceback.size(), 2u);
  std::string report = r.result.error.codex_report();
  EXPECT_NE(report.find("Traceback (most recent call last):\n  * t.star:3, in <module>\n      f()\n"), std::string::npos) << report;
  EXPECT_NE(report.find("error: fail: deep\n --> t.star:2:5\n"), std::string::npos) << report;
}

TEST(StarlarkHostile, RecursionIsBounded) {
  EXPECT_EQ(error_of("def f():\n    f()\nf()\n"), "Starlark call stack overflow");
}

TEST(StarlarkHostile, DeepNestingIsBounded) {
  std::string deep(100000, '[');
  EXPECT_NE(error_of("x = " + deep + "\n").find("nesting too deep"), std::string::npos);
  std::string parens = "x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n";
  EXPECT_NE(error_of(parens).find("nesting too deep"), std::string::npos);
  std::string unary = "x = " + std::string(100000, '-') + "1\n";
  EXPECT_NE(error_of(unary).find("nesting too deep"), std::string::npos);
  // Runtime-built nesting: repr/equality refuse instead of overflowing the stack.
  std::string code = "x = []\nfor i in range(100000):\n    x = [x]\ny = repr(x)\n";
  EXPECT_NE(error_of(code).find("nesting too deep"), std::string::npos);
}

TEST(StarlarkHostile, HugeValuesHitTheMemoryBudget) {
  EXPECT_NE(error_of("x = \"x\" * 1000000000000\n").find("memory budget"), std::string::npos);
  EXPECT_NE(error_of("x = [0] * 10000000000\n").find("memory budget"), std::string::npos);
  EXPECT_NE(error_of("x = list(range(1000000000000))\n").find("memory budget"), std::string::npos);
  // Sharing makes an exponentially large value out of a small heap: bounded too.
  EXPECT_FALSE(error_of("a = [0] * 1000\nb = [a] * 1000\nc = [b] * 1000\nd = repr(c)\n").empty());
}

TEST(StarlarkHostile, StepBudgetStopsLoops) {
  EvalLimits limits;
  limits.max_steps = 100000;
  RunOutput r = run("for i in range(1000000000):\n    pass\n", limits);
  ASSERT_FALSE(r.result.ok);
  EXPECT_NE(r.result.error.message.find("step budget"), std::string::npos);
}

TEST(StarlarkHostile, MegabyteStringsWork) {
  RunOutput r = run("s = \"" + std::string(1 << 20, 'a') + "\"\nout(len(s + s))\n");
  ASSERT_TRUE(r.result.ok) << r.result.error.message;
  EXPECT_EQ(r.out[0], "2097152");
}

TEST(StarlarkHostile, CyclesPrintAndDoNotLeak) {
  RunOutput r = run("x = [1]\nx.append(x)\nout(x)\n");
  ASSERT_TRUE(r.result.ok) << r.result.error.message;
  EXPECT_EQ(r.out[0], "[1, [...]]");
}

TEST(StarlarkHostile, InvalidUtf8InSourceIsAParseErrorNotACrash) {
  // The policy loader rejects invalid UTF-8 before parsing; the evaluator must still cope.
  std::string code = "x = \"\xff\xfe\"\ny = \xc3\n";
  EXPECT_FALSE(run(code).result.ok);
}

}  // namespace
}  // namespace codexd::starlark
