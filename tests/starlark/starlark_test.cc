// Tests of codexd_starlark: lexer/parser/evaluator behaviour, every error class, and hostile
// inputs (deep nesting, huge values, invalid UTF-8, step budget).
#include <gtest/gtest.h>

#include <string>
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
