#include "sequence_filters.h"

#include <algorithm>

#include "builtins.h"
#include "failure.h"
#include "interpreter.h"
#include "methods.h"
#include "python_text.h"

namespace dfi::jinja::detail {
namespace {

const Value kNoValue = Value::none();

const Value& arg(const CallArgs& args, std::size_t i, const char* kw) {
  const Value* v = argument(args, i, kw);
  return v ? *v : kNoValue;
}

std::string str(const Value& v) { return toStr(v); }

}  // namespace

Value attributePath(const Value& item, const Value& path) {
  Value current = item;
  if (path.kind() == Value::Kind::Int) return getItem(current, path);
  for (const auto& part : splitString(str(path), Value::string("."), -1, false)) {
    const std::string& p = part.asString();
    const bool digits = !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (current.isUndefined()) failUndefined(current);
    current = digits ? getItem(current, Value::integer(std::stoll(p))) : getItem(current, part);
  }
  return current;
}

Value sortKey(const Value& v, bool caseSensitive) { return !caseSensitive && v.isString() ? Value::string(pythonLower(v.asString())) : v; }

ValueList sorted(ValueList items, bool reverse, const std::function<Value(const Value&)>& key) {
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& item : items) keyed.emplace_back(key(item), std::move(item));
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return reverse ? lessThan(b.first, a.first) : lessThan(a.first, b.first);
  });
  ValueList out;
  for (auto& [k, v] : keyed) out.push_back(std::move(v));
  return out;
}

// select/reject and their attribute forms.
ValueList selectItems(Interpreter& interp, const Value& seq, CallArgs& args, bool byAttribute, bool keep) {
  std::size_t next = 0;
  Value attribute;
  if (byAttribute) attribute = arg(args, next++, nullptr);
  std::string test;
  CallArgs testArgs;
  if (const Value* t = argument(args, next++, nullptr)) {
    test = str(*t);
    for (std::size_t i = next; i < args.positional.size(); ++i) testArgs.positional.push_back(args.positional[i]);
  }
  if (!test.empty() && testAvailability(test) != Availability::Implemented) fail("No test named '" + test + "'.");
  ValueList out;
  for (const Value& item : iterate(seq)) {
    const Value subject = byAttribute ? attributePath(item, attribute) : item;
    CallArgs copy = testArgs;
    const bool passed = test.empty() ? subject.truthy() : applyTest(interp, test, subject, copy);
    if (passed == keep) out.push_back(item);
  }
  return out;
}

ValueList mapItems(Interpreter& interp, const Value& v, CallArgs& args) {
  ValueList out;
  const Value* attribute = argument(args, 99, "attribute");
  if (attribute) {
    const Value* def = argument(args, 99, "default");
    for (const Value& item : iterate(v)) {
      Value mapped = attributePath(item, *attribute);
      out.push_back(mapped.isUndefined() && def ? *def : mapped);
    }
    return out;
  }
  if (args.positional.empty()) fail("map requires a filter argument");
  const std::string filter = str(args.positional[0]);
  if (filterAvailability(filter) != Availability::Implemented) fail("No filter named '" + filter + "'.");
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : iterate(v)) {
    CallArgs copy = rest;
    out.push_back(applyFilter(interp, filter, item, copy));
  }
  return out;
}

ValueList batchItems(const Value& v, const CallArgs& args) {
  const std::int64_t size = arg(args, 0, "linecount").isNone() ? 1 : arg(args, 0, "linecount").asInt();
  if (size <= 0) fail("ValueError: batch size must be positive");
  ValueList out, current;
  for (const Value& item : iterate(v)) {
    current.push_back(item);
    if (static_cast<std::int64_t>(current.size()) == size) out.push_back(Value::list(std::move(current))), current.clear();
  }
  if (!current.empty()) {
    if (const Value* fill = argument(args, 1, "fill_with"); fill && !fill->isNone())
      while (static_cast<std::int64_t>(current.size()) < size) current.push_back(*fill);
    out.push_back(Value::list(std::move(current)));
  }
  return out;
}

}  // namespace dfi::jinja::detail
