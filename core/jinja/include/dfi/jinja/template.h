#pragma once
// A Jinja template engine that renders chat templates byte for byte as Hugging Face
// transformers' apply_chat_template does: jinja2 in an ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks, the loopcontrols extension, {% generation %}, and transformers'
// globals (raise_exception, strftime_now, namespace, dict) and its tojson filter.
//
// The context is a JSON object of the variables the template sees (messages, tools,
// add_generation_prompt, bos_token, ...). Pass an ordered_json to keep the key order of
// Python dicts, which templates observe through items(), tojson and iteration.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dfi/base/error.h"

namespace dfi::jinja {

// The template text is not valid Jinja, or uses a construct this engine does not support
// (the message names the source, line and column).
class TemplateSyntaxError : public FormatError {
 public:
  using FormatError::FormatError;
};

// Rendering failed where jinja2 fails too: an undefined value used, a type error, a sandbox
// refusal, or one of this engine's limits (depth, steps, output size) was reached.
class RenderError : public ValidationError {
 public:
  using ValidationError::ValidationError;
};

// The template itself called raise_exception(message); message() is the template's text.
// Not a RenderError, so a caller can tell a template's refusal from an engine failure.
class TemplateRaised : public ValidationError {
 public:
  using ValidationError::ValidationError;
};

struct RenderOptions {
  // What strftime_now() reads as the current local time; the real clock when unset.
  std::optional<std::chrono::system_clock::time_point> now;
};

namespace detail {
struct ParsedTemplate;
}

class Template {
 public:
  // Throws TemplateSyntaxError naming sourceName, line and column.
  static Template parse(std::string_view text, std::string sourceName);

  std::string render(const nlohmann::ordered_json& context, const RenderOptions& options = {}) const;
  // Same, for a context whose object keys are sorted (nlohmann::json does not keep order).
  std::string render(const nlohmann::json& context, const RenderOptions& options = {}) const;

  // Top-level names the template reads before (or without) assigning them itself, in order of
  // first use, leaving out jinja's and transformers' globals (range, namespace, loop, ...).
  std::vector<std::string> variables() const;

  const std::string& sourceName() const;

 private:
  std::shared_ptr<const detail::ParsedTemplate> parsed_;
};

// The template text of a tokenizer_config.json "chat_template" field: a string, or a list of
// {name, template} from which transformers takes `name` (or "default" when name is empty).
// Throws UsageError when the name is not there, FormatError when the field has another shape.
std::string selectChatTemplate(const nlohmann::ordered_json& field, std::string_view name = {});

}  // namespace dfi::jinja
