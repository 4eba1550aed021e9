#include "dfi/jinja/template.h"

#include <nlohmann/json.hpp>

#include "failure.h"
#include "interpreter.h"
#include "lexer.h"
#include "parser.h"
#include "variables.h"

namespace dfi::jinja {

namespace detail {
struct ParsedTemplate {
  ParsedBody body;
  std::vector<std::string> variables;
};
}  // namespace detail

Template Template::parse(std::string_view text, std::string sourceName) {
  auto parsed = std::make_shared<detail::ParsedTemplate>();
  parsed->body = detail::parseTemplate(detail::lex(text, sourceName), sourceName);
  parsed->variables = detail::readVariables(parsed->body.body);
  Template t;
  t.parsed_ = std::move(parsed);
  return t;
}

std::string Template::render(const nlohmann::ordered_json& context, const RenderOptions& options) const {
  if (!context.is_object()) throw UsageError("the template context must be a JSON object", {parsed_->body.sourceName, "", std::nullopt});
  detail::Value variables;
  try {
    variables = detail::Value::fromJson(context);
  } catch (const detail::RuntimeFailure& f) {
    throw UsageError(f.what(), {parsed_->body.sourceName, "context", std::nullopt});
  }
  detail::Interpreter interpreter(parsed_->body, std::move(variables), options);
  return interpreter.render();
}

std::string Template::render(const nlohmann::json& context, const RenderOptions& options) const {
  return render(nlohmann::ordered_json::parse(context.dump()), options);
}

std::vector<std::string> Template::variables() const { return parsed_->variables; }

const std::string& Template::sourceName() const { return parsed_->body.sourceName; }

std::string selectChatTemplate(const nlohmann::ordered_json& field, std::string_view name) {
  if (field.is_string()) return field.get<std::string>();
  if (!field.is_array()) throw FormatError("chat_template must be a string or a list of {name, template}");
  // transformers turns the list into {name: template} and takes the requested name, else "default".
  const std::string wanted = name.empty() ? "default" : std::string(name);
  std::vector<std::string> names;
  for (const auto& entry : field) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") || !entry["name"].is_string() ||
        !entry["template"].is_string())
      throw FormatError("each chat_template entry must be an object with string 'name' and 'template'");
    names.push_back(entry["name"].get<std::string>());
  }
  const nlohmann::ordered_json* chosen = nullptr;
  for (const auto& entry : field)
    if (entry["name"] == wanted) chosen = &entry;  // a later duplicate wins, as in a dict
  if (!chosen) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw UsageError(name.empty() ? "this tokenizer has several chat templates and none is named 'default' (it has: " + known + ")"
                                  : "no chat template named '" + wanted + "' (this tokenizer has: " + known + ")");
  }
  return (*chosen)["template"].get<std::string>();
}

}  // namespace dfi::jinja
