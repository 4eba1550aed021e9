#!/usr/bin/env python3
"""Chat template oracle: renders every real chat template in tests/data/chat_templates (and the
Qwen3 tokenizer_config.json's) with Hugging Face transformers' own code path
(transformers.utils.chat_template_utils.render_jinja_template: jinja2's sandbox with
transformers' settings, globals and reasoning-field aliasing) over seeded conversations, and
writes one JSONL line per case:

    {"template", "case", "now", "context", "text"}   or   {..., "error": true, "message"}

Each conversation goes through what tokenizer.apply_chat_template(tokenize=False) does (None values
dropped, the tokenizer's special tokens passed as variables). `context` is exactly the variables
transformers handed to jinja2 (captured at
jinja2.Template.render), so the C++ test renders the same input. strftime_now() reads a frozen
clock, `now`, which the test passes to dfi::jinja as RenderOptions::now.

Usage: gen_chat_template_cases.py --out DIR
"""

import argparse
import copy
import datetime as dt
import json
import pathlib
import random

import jinja2
import transformers.utils.chat_template_utils as chat_template_utils

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CASES_PER_TEMPLATE = 28
FROZEN_NOW = dt.datetime(2025, 3, 14, 9, 26, 53)


class FrozenDatetime(dt.datetime):
    """strftime_now() calls datetime.now() through the module's global; freeze it."""

    @classmethod
    def now(cls, tz=None):
        return FROZEN_NOW


chat_template_utils.datetime = FrozenDatetime

_captured = {}
_original_render = jinja2.environment.Template.render


def _capturing_render(self, *args, **kwargs):
    _captured["context"] = dict(*args, **kwargs)
    return _original_render(self, *args, **kwargs)


jinja2.environment.Template.render = _capturing_render

# family: which tokens the tokenizer config passes, how tool arguments are given, what the
# template reads (reasoning, kwargs), and how many tool calls one assistant turn may carry.
FAMILIES = {
    "llama3": dict(tokens={"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}, args="dict", max_calls=1),
    "gpt-oss": dict(tokens={"bos_token": "<|startoftext|>", "eos_token": "<|return|>"}, args="dict", max_calls=1),
    "gemma": dict(tokens={"bos_token": "<bos>", "eos_token": "<eos>"}, args="dict", max_calls=2),
    "glm": dict(tokens={"eos_token": "<|endoftext|>"}, args="dict", max_calls=2),
    "deepseek": dict(tokens={"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}, args="string", max_calls=2),
    "kimi": dict(tokens={"eos_token": "<|im_end|>"}, args="either", max_calls=2),
    "minimax": dict(tokens={"eos_token": "[e~["}, args="dict", max_calls=2),
    "qwen": dict(tokens={"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}, args="dict", max_calls=2),
}

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather for a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name, e.g. Zürich"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit", "default": "celsius"}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search_docs", "description": "Search the documentation.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Filter tags"},
            "limit": {"type": "integer", "description": "Most results", "default": 5}},
            "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "compute", "description": "Evaluate arithmetic with options.",
        "parameters": {"type": "object", "properties": {
            "expression": {"type": "string"},
            "precision": {"type": "number", "nullable": True},
            "exact": {"type": "boolean"},
            "options": {"type": "object", "properties": {"mode": {"type": "string"}, "depth": {"type": "integer"}},
                        "required": ["mode"]}},
            "required": ["expression", "exact"]}}},
    {"type": "function", "function": {"name": "get_time", "description": "Current time, no arguments.",
                                      "parameters": {"type": "object", "properties": {}}}},
]

TEXTS = [
    "Hello!", "What is 2+2?", "Tell me about Zürich — and 東京 too 🙂.", "  padded with spaces and a newline \n",
    "Render {{x}} and {% if y %}literal{% endif %} as text.", "Line one\nLine two\n\nLine four",
    "Quotes: 'single' and \"double\" and back\\slash.", "Unicode: café, naïve, Ελληνικά, русский, العربية.",
    "Short.", "Use <tags> & ampersands > here < there.",
]
REASONING = ["Let me think step by step.", "The user wants a short answer.\nCheck units first.",
             "Compute 2+2 = 4 — easy.", "  padded reasoning  "]


def tool_arguments(rng, name):
    pools = {
        "get_weather": [{"city": "Paris"}, {"city": "Zürich", "unit": "celsius"}, {"city": "東京", "unit": "fahrenheit"}],
        "search_docs": [{"query": "chat templates", "tags": ["jinja", "hf"], "limit": 3}, {"query": "{{x}} escaping"}],
        "compute": [{"expression": "2+2", "exact": True, "precision": 0.001},
                    {"expression": "1/3", "exact": False, "precision": None, "options": {"mode": "fast", "depth": 2}},
                    {"expression": "10**20", "exact": True, "precision": 1e-05}],
        "get_time": [{}],
    }
    return copy.deepcopy(rng.choice(pools[name]))


# Templates that read content parts (lists of {type, text}) and tolerate a tool-call message
# without content; the others would only raise on those inputs.
MULTIMODAL = ("GLM", "Kimi", "MiniMax", "Qwen3.5", "gemma")
CONTENT_OPTIONAL = ("GLM", "Kimi", "MiniMax", "Qwen3.5", "gemma", "Llama", "V3.2")


def make_tool_call(rng, family, template_name, tools, index):
    name = rng.choice([t["function"]["name"] for t in tools])
    args = tool_arguments(rng, name)
    style = "dict" if "V3.2" in template_name else FAMILIES[family]["args"]
    as_string = style == "string" or (style == "either" and rng.random() < 0.5) or rng.random() < 0.08
    return {"id": f"call_{index}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False) if as_string else args}}


def assistant_message(rng, with_reasoning):
    content = rng.choice(TEXTS)
    message = {"role": "assistant", "content": content}
    if with_reasoning:
        reasoning = rng.choice(REASONING)
        if rng.random() < 0.6:
            message["reasoning_content"] = reasoning
        else:
            message["content"] = f"<think>\n{reasoning}\n</think>\n\n{content}"
    return message


def conversation(rng, family, template_name):
    use_tools = rng.random() < 0.5
    tools = rng.sample(TOOLS, rng.randint(1, 3)) if use_tools else None
    messages = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": rng.choice(["You are a helpful assistant.", "Be brief. Answer in français.", TEXTS[4]])})
    turns = rng.randint(1, 5)
    calls = 0
    for turn in range(turns):
        if any(t in template_name for t in MULTIMODAL) and rng.random() < 0.15:  # content parts
            parts = [{"type": "text", "text": rng.choice(TEXTS)}]
            if rng.random() < 0.5:
                parts.insert(0, {"type": "image", "image": "<image>"})
            messages.append({"role": "user", "content": parts})
        else:
            messages.append({"role": "user", "content": rng.choice(TEXTS)})
        last = turn == turns - 1
        if last and rng.random() < 0.6:
            break  # end on a user turn, as at inference
        if use_tools and rng.random() < 0.5:
            n = rng.randint(1, FAMILIES[family]["max_calls"])
            tool_calls = [make_tool_call(rng, family, template_name, tools, calls + i) for i in range(n)]
            calls += n
            call_message = {"role": "assistant", "tool_calls": tool_calls}
            style = rng.random()
            if style < 0.15 and any(t in template_name for t in CONTENT_OPTIONAL):
                call_message["content"] = None  # as the OpenAI API sends it; transformers drops None keys
            elif style < 0.4:
                call_message["content"] = rng.choice(["", "Let me check.", "I'll call a tool."])
            elif style < 0.6:
                call_message["reasoning_content"] = rng.choice(REASONING)
                call_message["content"] = ""
            elif not any(t in template_name for t in CONTENT_OPTIONAL):
                call_message["content"] = ""
            messages.append(call_message)
            for call in tool_calls:
                result = rng.choice(['{"temperature": 21, "sky": "clear"}', "42", "Résultat: ok ✅", "line1\nline2"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": result})
        messages.append(assistant_message(rng, rng.random() < 0.5))
    return messages, tools


def kwargs_for(rng, family, template_name):
    kwargs = {"add_generation_prompt": rng.random() < 0.6}
    choice = rng.random()
    if choice < 0.35:
        kwargs["enable_thinking"] = True
    elif choice < 0.7:
        kwargs["enable_thinking"] = False
    if family == "gpt-oss":
        effort = rng.choice([None, "low", "medium", "high"])
        if effort:
            kwargs["reasoning_effort"] = effort
        if rng.random() < 0.2:
            kwargs["builtin_tools"] = rng.choice([["browser"], ["python"], ["browser", "python"]])
    if family == "llama3":
        if rng.random() < 0.5:
            kwargs["date_string"] = "14 Mar 2025"
        if "3.1" in template_name and rng.random() < 0.2:
            kwargs["builtin_tools"] = ["brave_search", "wolfram_alpha"]
    if family == "deepseek" and rng.random() < 0.5:
        kwargs["thinking"] = rng.random() < 0.5
    return kwargs


def templates():
    found = []
    for path in sorted((DATA / "chat_templates").glob("*/*.jinja")):
        found.append((path.relative_to(DATA).as_posix(), path.parent.name, path.read_text(encoding="utf-8")))
    qwen3_config = DATA / "tokenizers" / "qwen3" / "tokenizer_config.json"
    found.append((qwen3_config.relative_to(DATA).as_posix(), "qwen",
                  json.loads(qwen3_config.read_text(encoding="utf-8"))["chat_template"]))
    return found


def render(template_text, messages, tools, kwargs):
    _captured.clear()
    # What apply_chat_template does before rendering: message objects to dicts, None values dropped.
    messages = chat_template_utils._normalize_chat_messages(messages)
    try:
        rendered, _ = chat_template_utils.render_jinja_template(
            conversations=[messages], tools=tools, chat_template=template_text, **kwargs)
        return {"context": _captured["context"], "text": rendered[0]}
    except Exception as e:  # jinja2 raised: the C++ engine must raise too
        if "context" not in _captured:
            # the template failed to compile: record what would have been passed
            context = {"messages": messages, "tools": tools, "documents": None, **kwargs}
        else:
            context = _captured["context"]
        return {"context": context, "error": True, "message": f"{type(e).__name__}: {e}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=pathlib.Path)
    out_dir = parser.parse_args().out
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    for name, family, text in templates():
        rng = random.Random(f"chat-template-oracle:{name}")
        cases = [([], None, {"add_generation_prompt": True})]  # no messages at all
        for _ in range(CASES_PER_TEMPLATE):
            messages, tools = conversation(rng, family, name)
            cases.append((messages, tools, kwargs_for(rng, family, name)))
        for index, (messages, tools, kwargs) in enumerate(cases):
            result = render(text, messages, tools, {**FAMILIES[family]["tokens"], **kwargs})
            lines.append(json.dumps({"template": name, "case": index, "now": FROZEN_NOW.isoformat(), **result},
                                    ensure_ascii=False))
    (out_dir / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    errors = sum('"error": true' in line for line in lines)
    print(f"{len(lines)} cases ({errors} where jinja2 raised) -> {out_dir / 'cases.jsonl'}")


if __name__ == "__main__":
    main()
