// The pieces of dfi::jinja one at a time: whitespace control, loops, macros, namespaces, Python
// printing, errors with their positions, sandbox refusals and the limits on hostile templates.
// Each expectation is what jinja2 3.1 with transformers' settings produces.
#include <gtest/gtest.h>

#include <ctime>

#include <nlohmann/json.hpp>

#include "dfi/jinja/template.h"

using dfi::jinja::RenderError;
using dfi::jinja::Template;
using dfi::jinja::TemplateRaised;
using dfi::jinja::TemplateSyntaxError;
using nlohmann::ordered_json;

namespace {

std::string render(const std::string& text, const ordered_json& context = ordered_json::object()) {
  return Template::parse(text, "test.jinja").render(context);
}

template <typename E>
std::string errorOf(const std::string& text, const ordered_json& context = ordered_json::object()) {
  try {
    render(text, context);
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error from: " << text;
  return {};
}

}  // namespace

TEST(JinjaWhitespace, TrimBlocksAndLstripBlocksAsTransformersSetsThem) {
  // lstrip_blocks removes the indentation before a block tag, trim_blocks the newline after it.
  EXPECT_EQ(render("a\n  {% if true %}\n  b\n  {% endif %}\nc\n"), "a\n  b\nc");
  // A {{ }} tag is neither lstripped nor trimmed.
  EXPECT_EQ(render("  {{ 1 }}\nx"), "  1\nx");
  // Comments are lstripped and trimmed like blocks.
  EXPECT_EQ(render("a\n  {# note #}\nb"), "a\nb");
}

TEST(JinjaWhitespace, MinusAndPlusModifiers) {
  EXPECT_EQ(render("x   {%- if 1 -%}   y   {%- endif -%}   z"), "xyz");
  EXPECT_EQ(render("x \n\n {{- 1 -}} \n\n y"), "x1y");
  // '+' keeps the indentation (no lstrip) and the newline (no trim).
  EXPECT_EQ(render("a\n  {%+ if true +%}\nb{% endif %}"), "a\n  \nb");
  // CRLF is normalized, and one trailing newline is dropped.
  EXPECT_EQ(render("a\r\nb\r\n\r\n"), "a\nb\n");
  EXPECT_EQ(render("{% raw %}{{ x }}{% endraw %}"), "{{ x }}");
}

TEST(JinjaLoops, LoopVariablesFilterElseAndControl) {
  EXPECT_EQ(render("{% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.previtem }}|{% endfor %}"),
            "12TrueFalse|21FalseFalsea|30FalseTrueb|");
  EXPECT_EQ(render("{% for x in [1,2,3,4] if x is even %}{{ x }}/{{ loop.length }} {% endfor %}"), "2/2 4/2 ");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in range(10) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}"), "02");
  EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}"), "a=1;b=2;");
}

TEST(JinjaLoops, EachIterationHasItsOwnScope) {
  // An assignment inside a loop is lost at the next iteration and after the loop: the reason
  // templates use namespace().
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1,2] %}{{ x }}{% set x = x + 10 %}{{ x }};{% endfor %}{{ x }}"), "111;111;1");
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"), "6");
}

TEST(JinjaMacros, DefaultsKeywordsRecursionAndLateBinding) {
  const std::string macro = "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}";
  EXPECT_EQ(render(macro + "{{ greet('Ann') }} {{ greet('Bob', 'Hi') }} {{ greet(greeting='Yo', name='Cy') }}"),
            "Hello, Ann! Hi, Bob! Yo, Cy!");
  EXPECT_EQ(render("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}"), "4321");
  // A macro reads the variables of its defining scope as they are when it is called.
  EXPECT_EQ(render("{% macro m() %}{{ y }}{% endmacro %}{% set y = 5 %}{{ m() }}{% set y = 6 %}{{ m() }}"), "56");
  EXPECT_NE(errorOf<RenderError>(macro + "{{ greet('a', 'b', 'c') }}").find("takes not more than 2 argument(s)"), std::string::npos);
}

TEST(JinjaValues, PrintsAsPythonDoes) {
  EXPECT_EQ(render("{{ [1, 2.0, 'a', none, true] }} {{ {'a': 1, 'b': \"it's\"} }} {{ (1,) }}"),
            "[1, 2.0, 'a', None, True] {'a': 1, 'b': \"it's\"} (1,)");
  EXPECT_EQ(render("{{ 1e-5 }} {{ 0.1 + 0.2 }} {{ 1.5e20 }} {{ 3 / 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }}"),
            "1e-05 0.30000000000000004 1.5e+20 1.5 -4 2 1024");
  EXPECT_EQ(render("[{{ missing }}]{{ 'a' ~ none ~ true }}"), "[]aNoneTrue");
}

TEST(JinjaValues, ContextKeepsKeyOrderOfOrderedJson) {
  const ordered_json context = ordered_json::parse(R"({"d": {"zeta": 1, "alpha": 2}})");
  EXPECT_EQ(render("{% for k in d %}{{ k }} {% endfor %}{{ d|tojson }}", context), "zeta alpha {\"zeta\": 1, \"alpha\": 2}");
}

TEST(JinjaFilters, TojsonAsTransformersOverridesIt) {
  EXPECT_EQ(render("{{ {'b': 'é', 'a': [1, none]}|tojson }}"), "{\"b\": \"é\", \"a\": [1, null]}");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2}|tojson(indent=2, sort_keys=true) }}"), "{\n  \"a\": 2,\n  \"b\": 1\n}");
  EXPECT_EQ(render("{{ 'é'|tojson(ensure_ascii=true) }}{{ {'a': 1}|tojson(separators=(',', ':')) }}"), "\"\\u00e9\"{\"a\":1}");
  EXPECT_EQ(render("{{ {'b': 1, 'A': 2, 'a': 3}|dictsort }}"), "[('A', 2), ('a', 3), ('b', 1)]");
  EXPECT_EQ(render("{{ [{'n': 'a'}, {'n': 'b'}]|map(attribute='n')|join(', ') }}|{{ ['x', 'y']|map('upper')|list }}"), "a, b|['X', 'Y']");
}

TEST(JinjaFilters, LazyFiltersAreOneShotIteratorsAsInJinja2) {
  // select/map/unique/reverse return Python iterators: always truthy, consumed once, not indexable.
  EXPECT_EQ(render("{% set u = [1, 2, 3]|select('odd') %}{{ u|list }}{{ u|list }}"), "[1, 3][]");
  EXPECT_EQ(render("{% if []|select %}truthy{% endif %}"), "truthy");
  EXPECT_EQ(render("[{{ ([1]|map('string'))[0] }}]{% set r = [1, 2]|reverse %}{{ r|first }}{{ r|list }}"), "[]2[1]");
  EXPECT_NE(errorOf<RenderError>("{{ [1]|select|length }}").find("has no len()"), std::string::npos);
}

TEST(JinjaFilters, PercentFormattingAndTitleAsPython) {
  EXPECT_EQ(render("{{ '%s=%05.1f|%-3d|%x' % ('pi', 3.14159, 7, 255) }}|{{ '%(a)s'|format(a=1) }}"), "pi=003.1|7  |ff|1");
  EXPECT_NE(errorOf<RenderError>("{{ '%s %s' % ('a',) }}").find("not enough arguments"), std::string::npos);
  // The title filter capitalizes after - ( [ { < and whitespace, unlike str.title().
  EXPECT_EQ(render("{{ 'hello-world (big) x1y'|title }}|{{ 'x1y'.title() }}"), "Hello-World (Big) X1y|X1Y");
}

TEST(JinjaErrors, SyntaxErrorsNameSourceLineAndColumn) {
  const std::string message = errorOf<TemplateSyntaxError>("line one\n{% if true %}\n  {{ 1 + }}\n{% endif %}");
  EXPECT_NE(message.find("test.jinja"), std::string::npos) << message;
  EXPECT_NE(message.find("line 3, column 10"), std::string::npos) << message;
  EXPECT_NE(errorOf<TemplateSyntaxError>("{% if x %}never closed").find("Jinja was looking for the following tags: 'elif' or 'else' or 'endif'"),
            std::string::npos);
  EXPECT_NE(errorOf<TemplateSyntaxError>("{% do x %}").find("Encountered unknown tag 'do'"), std::string::npos);
  EXPECT_NE(errorOf<TemplateSyntaxError>("{% break %}").find("outside of a loop"), std::string::npos);
}

TEST(JinjaErrors, UnknownFilterFailsAtParseUnlessInsideAnIf) {
  EXPECT_NE(errorOf<TemplateSyntaxError>("{{ x|from_json }}").find("No filter named 'from_json'"), std::string::npos);
  // jinja2 compiles an unknown filter inside an if, and fails only when it runs.
  EXPECT_EQ(render("{% if false %}{{ x|from_json }}{% endif %}ok"), "ok");
  EXPECT_NE(errorOf<RenderError>("{% if true %}{{ x|from_json }}{% endif %}").find("No filter named 'from_json'"), std::string::npos);
}

TEST(JinjaErrors, RuntimeErrorsNameLineAndColumn) {
  const std::string message = errorOf<RenderError>("ok\n  {{ user.name }}");
  EXPECT_NE(message.find("line 2, column 10"), std::string::npos) << message;  // the "." of user.name
  EXPECT_NE(message.find("'user' is undefined"), std::string::npos) << message;
  EXPECT_NE(errorOf<RenderError>("{{ 'a' + 1 }}").find("can only concatenate str"), std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{% for x in none %}{% endfor %}").find("'NoneType' object is not iterable"), std::string::npos);
}

TEST(JinjaErrors, RaiseExceptionIsTemplateRaisedWithTheTemplatesMessage) {
  try {
    render("{{ raise_exception('Only user and assistant roles are supported!') }}");
    FAIL() << "raise_exception did not throw";
  } catch (const RenderError&) {
    FAIL() << "raise_exception must not be an engine error";
  } catch (const TemplateRaised& e) {
    EXPECT_EQ(e.message(), "Only user and assistant roles are supported!");
    EXPECT_NE(std::string(e.what()).find("line 1"), std::string::npos);
  }
}

TEST(JinjaSandbox, RefusesMutationAndPrivateAttributes) {
  EXPECT_NE(errorOf<RenderError>("{% set q = namespace(ids=[]) %}{% set _ = q.ids.append(1) %}")
                .find("SecurityError: access to attribute 'append' of 'list' object is unsafe."),
            std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{{ {}.update({'a': 1}) }}").find("SecurityError"), std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{{ ''.__class__() }}").find("SecurityError"), std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{% set ns = namespace() %}{% set ns._x = 1 %}").find("underscore-prefixed"), std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{% set s = 'x' %}{% set s.y = 1 %}").find("non-namespace object"), std::string::npos);
  // Reading a refused method is only an undefined value: printing it is empty, as in jinja2.
  EXPECT_EQ(render("[{{ [].append }}]"), "[]");
}

TEST(JinjaLimits, HostileTemplatesFailCleanly) {
  EXPECT_NE(errorOf<RenderError>("{% for i in range(10**9) %}{% endfor %}").find("MAX_RANGE (100000)"), std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("nested"), std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{{ 'x' * 10**9 }}").find("too large"), std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}").find("evaluation steps"),
            std::string::npos);
  EXPECT_NE(errorOf<TemplateSyntaxError>("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(errorOf<RenderError>("{{ 2 ** 64 }}").find("overflow"), std::string::npos);
  // A namespace holding itself (found by fuzz_jinja): printing it is refused at the print, where
  // jinja2 would print the cycle as "{...}", and the cycle is freed with the render (ASan's leak
  // check holds the asan preset's run of this test to that).
  EXPECT_NE(errorOf<RenderError>("{% set ns = namespace(n=0) %}{% set ns.n = ns %}{{ ns.n }}").find("nested too deeply"),
            std::string::npos);
}

TEST(JinjaGlobals, StrftimeNowReadsTheGivenClock) {
  std::tm tm{};
  tm.tm_year = 2025 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 14;
  tm.tm_hour = 9;
  tm.tm_isdst = -1;
  dfi::jinja::RenderOptions options;
  options.now = std::chrono::system_clock::from_time_t(std::mktime(&tm));
  EXPECT_EQ(Template::parse("{{ strftime_now('%d %b %Y') }}", "t").render(ordered_json::object(), options), "14 Mar 2025");
}

TEST(JinjaVariables, ListsWhatTheTemplateReadsFromItsCaller) {
  const Template t = Template::parse(
      "{% if not tools is defined %}{% set tools = none %}{% endif %}{% set x = 1 %}"
      "{% for m in messages %}{{ m.content }}{{ x }}{{ loop.index }}{% endfor %}"
      "{% macro f(a) %}{{ a }}{{ reasoning_effort }}{% endmacro %}{{ range(2)|list }}{{ raise_exception is defined }}",
      "t");
  EXPECT_EQ(t.variables(), (std::vector<std::string>{"tools", "messages", "reasoning_effort"}));
}

TEST(JinjaChatTemplateField, StringOrNamedList) {
  EXPECT_EQ(dfi::jinja::selectChatTemplate(ordered_json("{{ x }}")), "{{ x }}");
  const ordered_json named = ordered_json::parse(R"([{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}])");
  EXPECT_EQ(dfi::jinja::selectChatTemplate(named), "D");
  EXPECT_EQ(dfi::jinja::selectChatTemplate(named, "tool_use"), "T");
  EXPECT_THROW(dfi::jinja::selectChatTemplate(named, "rag"), dfi::UsageError);
  EXPECT_THROW(dfi::jinja::selectChatTemplate(ordered_json::parse(R"([{"name": "x", "template": "X"}])")), dfi::UsageError);
  EXPECT_THROW(dfi::jinja::selectChatTemplate(ordered_json(3)), dfi::FormatError);
}
