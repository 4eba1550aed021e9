// libFuzzer target for dfi_jinja: parses arbitrary bytes as a template and renders it against
// one of three small contexts (a chat with tools, an empty one, nested data). A template is user
// input, so whatever the bytes, parse and render must either succeed with valid UTF-8 or throw a
// dfi::Error (syntax, render, or the template's own raise_exception), within the engine's
// bounds on nesting, steps and output: never crash, overflow the stack or exhaust memory.

#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/base/utf8.h"
#include "dfi/jinja/template.h"

namespace {

const nlohmann::ordered_json& context(std::size_t which) {
  static const nlohmann::ordered_json contexts[] = {
      nlohmann::ordered_json::parse(R"({
        "messages": [
          {"role": "system", "content": "Be brief."},
          {"role": "user", "content": "Weather in Zürich? {{x}}"},
          {"role": "assistant", "content": "", "reasoning_content": "Call the tool.",
           "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}}}]},
          {"role": "tool", "tool_call_id": "c1", "content": "{\"t\": 21.5}"},
          {"role": "assistant", "content": "<think>\nok\n</think>\n\nSunny, 21.5 °C."}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}}],
        "add_generation_prompt": true, "enable_thinking": false, "bos_token": "<s>", "eos_token": "</s>"})"),
      nlohmann::ordered_json::object(),
      nlohmann::ordered_json::parse(R"({"messages": [], "x": [1, [2, [3, {"k": null}]]], "n": 1e-05, "s": "  padded\ttext  ", "b": false})"),
  };
  return contexts[which % 3];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto tpl = dfi::jinja::Template::parse(text, "fuzz.jinja");
    (void)tpl.variables();
    dfi::jinja::RenderOptions options;
    options.now = std::chrono::system_clock::time_point(std::chrono::seconds(1741944413));
    const std::string out = tpl.render(context(size), options);
    if (dfi::utf8::firstInvalidByte(out)) std::abort();  // rendered text must stay valid UTF-8
  } catch (const dfi::Error&) {
    // syntax errors, render errors, sandbox refusals, limits and raise_exception: all expected
  }
  return 0;
}
