// dflash-eval tokenize: encode text to ids, or (--decode) ids to text, with a model's
// tokenizer, one JSON line per input. Lets users check what the engine will feed the target.
//   --text S | --jsonl FILE   one input, or JSONL lines {"text": ...} (or {"messages": [...]}
//                             with --chat); with --decode the inputs are id arrays {"ids": [...]}
//   --chat [--no-thinking] [--chat-template-kwargs JSON]
//                             render the model's chat template first (a plain text is one user
//                             turn, with the generation prompt)

#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dfi/base/error.h"
#include "dfi/tokenizer/tokenizer.h"

namespace dfi::eval {
namespace {

using nlohmann::json;
using tokenizer::ChatMessage;
using tokenizer::Tokenizer;

struct TokenizeOptions {
  std::string tokenizerDir;
  std::string text;
  std::string jsonl;
  bool chat = false;
  bool noThinking = false;
  std::string chatKwargs;
  bool decode = false;
  bool skipSpecial = false;
};

// Where an input came from, for error messages.
struct Source {
  std::string file;
  std::size_t line = 0;  // 0 for --text
  ErrorContext context(const std::string& field) const {
    return {.file = file, .item = line ? "line " + std::to_string(line) + ": " + field : field};
  }
};

std::vector<ChatMessage> messagesOf(const json& input, const Source& source) {
  if (input.contains("text")) {
    if (!input["text"].is_string()) throw FormatError("\"text\" must be a string", source.context("text"));
    return {{"user", input["text"].get<std::string>()}};
  }
  const auto it = input.find("messages");
  if (it == input.end() || !it->is_array()) throw FormatError("expected \"text\" or a \"messages\" array", source.context("messages"));
  std::vector<ChatMessage> messages;
  for (const json& m : *it) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") || !m["content"].is_string())
      throw FormatError("each message needs string \"role\" and \"content\"", source.context("messages"));
    messages.push_back({m["role"], m["content"]});
  }
  return messages;
}

json encodeOne(const Tokenizer& tok, const TokenizeOptions& opt, const json& input, const Source& source) {
  std::string text;
  if (opt.chat) {
    const auto& chat = tok.chatTemplate();
    if (!chat) throw UsageError("--chat: no chat template in this tokenizer directory", {.file = opt.tokenizerDir});
    text = chat->render(messagesOf(input, source), {.enableThinking = !opt.noThinking, .keywords = opt.chatKwargs});
  } else {
    if (!input.contains("text") || !input["text"].is_string()) throw FormatError("expected a string \"text\"", source.context("text"));
    text = input["text"].get<std::string>();
  }
  try {
    return {{"ids", tok.encode(text)}};
  } catch (const FormatError& e) {  // invalid UTF-8: say which input, keep the offset
    ErrorContext where = source.context("text");
    where.byteOffset = e.context().byteOffset;
    throw FormatError(e.message(), where);
  }
}

json decodeOne(const Tokenizer& tok, const TokenizeOptions& opt, const json& input, const Source& source) {
  const json& ids = input.is_array() ? input : (input.is_object() && input.contains("ids") ? input["ids"] : input);
  if (!ids.is_array()) throw FormatError("expected an \"ids\" array", source.context("ids"));
  std::vector<std::int32_t> values;
  for (const json& id : ids) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < INT32_MIN || id.get<std::int64_t>() > INT32_MAX)
      throw FormatError("ids must be 32-bit integers, found " + id.dump(), source.context("ids"));
    values.push_back(id.get<std::int32_t>());
  }
  return {{"text", tok.decode(values, opt.skipSpecial)}};
}

json process(const Tokenizer& tok, const TokenizeOptions& opt, const json& input, const Source& source) {
  return opt.decode ? decodeOne(tok, opt, input, source) : encodeOne(tok, opt, input, source);
}

json parseLine(const std::string& line, const Source& source) {
  try {
    return json::parse(line);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a huge number
    throw FormatError(std::string("not valid JSON: ") + e.what(), source.context("JSON"));
  }
}

int runTokenize(const TokenizeOptions& opt) {
  if (opt.text.empty() == opt.jsonl.empty()) throw UsageError("tokenize: give exactly one of --text and --jsonl");
  if ((opt.noThinking || !opt.chatKwargs.empty()) && !opt.chat)
    throw UsageError("tokenize: --no-thinking and --chat-template-kwargs only apply with --chat");
  if (opt.decode && opt.chat) throw UsageError("tokenize: --chat does not apply to --decode");
  const Tokenizer tok = Tokenizer::fromDirectory(opt.tokenizerDir);

  if (!opt.text.empty()) {
    const Source source{"--text"};
    const json input = opt.decode ? parseLine(opt.text, source) : json{{"text", opt.text}};
    std::cout << process(tok, opt, input, source).dump() << "\n";
    return 0;
  }
  std::ifstream file;
  if (opt.jsonl != "-") {
    file.open(opt.jsonl);
    if (!file) throw IoError("cannot open JSONL input", {.file = opt.jsonl});
  }
  std::istream& in = opt.jsonl == "-" ? std::cin : file;
  Source source{opt.jsonl == "-" ? "<stdin>" : opt.jsonl};
  for (std::string line; std::getline(in, line);) {
    ++source.line;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::cout << process(tok, opt, parseLine(line, source), source).dump() << "\n";
  }
  return 0;
}

}  // namespace

void registerTokenizeCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("tokenize", "Encode text to token ids, or decode ids (--decode), one JSON line per input");
  auto opt = std::make_shared<TokenizeOptions>();
  sub->add_option("--tokenizer", opt->tokenizerDir, "Directory with tokenizer.json (and tokenizer_config.json)")
      ->required()
      ->check(CLI::ExistingDirectory);
  sub->add_option("--text", opt->text, "One input: text, or with --decode a JSON array of ids");
  sub->add_option("--jsonl", opt->jsonl, "JSONL input ('-' for stdin): {\"text\"|\"messages\"} lines, or {\"ids\"} with --decode");
  sub->add_flag("--chat", opt->chat, "Apply the model's chat template (text = one user turn) with the generation prompt");
  sub->add_flag("--no-thinking", opt->noThinking, "With --chat: enable_thinking=false");
  sub->add_option("--chat-template-kwargs", opt->chatKwargs, "JSON object of further chat template variables, as vLLM's chat_template_kwargs: {\"reasoning_effort\": \"high\"}");
  sub->add_flag("--decode", opt->decode, "Decode {\"ids\": [...]} to {\"text\": ...}");
  sub->add_flag("--skip-special", opt->skipSpecial, "With --decode: leave out special tokens");
  setAction(*sub, [opt] { return runTokenize(*opt); });
}

}  // namespace dfi::eval
