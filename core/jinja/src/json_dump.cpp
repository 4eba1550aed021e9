#include "json_dump.h"

#include <algorithm>
#include <cmath>

#include "failure.h"
#include "interpreter.h"
#include "python_text.h"

namespace dfi::jinja::detail {
namespace {

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& o) : o_(o) {
    itemSep_ = o.itemSeparator.value_or(o.indent ? "," : ", ");
    keySep_ = o.keySeparator.value_or(": ");
  }

  void write(const Value& v, int level) {
    using K = Value::Kind;
    if (level > kMaxNesting) fail("ValueError: value nested too deeply for tojson");
    if (out.size() > kMaxStringBytes) fail("tojson output too long");
    switch (v.kind()) {
      case K::None: out += "null"; return;
      case K::Bool: out += v.asBool() ? "true" : "false"; return;
      case K::Int: out += std::to_string(v.asInt()); return;
      case K::Float: out += floatText(v.asDouble()); return;
      case K::String: appendJsonString(v.asString(), o_.ensureAscii, out); return;
      case K::List: writeList(v.asList(), level); return;
      case K::Dict: writeDict(v.asDict(), level); return;
      default: fail("TypeError: Object of type " + v.typeName() + " is not JSON serializable");
    }
  }

  std::string out;

 private:
  static std::string floatText(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    return floatRepr(d);
  }

  void newline(int level) {
    if (!o_.indent) return;
    out += '\n';
    for (int i = 0; i < level; ++i) out += *o_.indent;
  }

  void writeList(const ValueList& items, int level) {
    if (items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out += itemSep_;
      newline(level + 1);
      write(items[i], level + 1);
    }
    newline(level);
    out += ']';
  }

  // json.dumps turns str, int, float, bool and None keys into strings; others are an error.
  std::string keyText(const Value& k) {
    using K = Value::Kind;
    switch (k.kind()) {
      case K::String: return k.asString();
      case K::None: return "null";
      case K::Bool: return k.asBool() ? "true" : "false";
      case K::Int: return std::to_string(k.asInt());
      case K::Float: return floatText(k.asDouble());
      default: fail("TypeError: keys must be str, int, float, bool or None, not " + k.typeName());
    }
  }

  void writeDict(const ValuePairs& pairs, int level) {
    if (pairs.empty()) {
      out += "{}";
      return;
    }
    std::vector<const std::pair<Value, Value>*> order;
    for (const auto& p : pairs) order.push_back(&p);
    if (o_.sortKeys)
      std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return lessThan(a->first, b->first); });
    out += '{';
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i) out += itemSep_;
      newline(level + 1);
      appendJsonString(keyText(order[i]->first), o_.ensureAscii, out);
      out += keySep_;
      write(order[i]->second, level + 1);
    }
    newline(level);
    out += '}';
  }

  const JsonDumpOptions& o_;
  std::string itemSep_, keySep_;
};

}  // namespace

std::string jsonDumps(const Value& v, const JsonDumpOptions& options) {
  JsonWriter writer(options);
  writer.write(v, 0);
  return std::move(writer.out);
}

}  // namespace dfi::jinja::detail
