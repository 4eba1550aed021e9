#include "value.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "dfi/base/utf8.h"
#include "failure.h"
#include "python_text.h"

namespace dfi::jinja::detail {

Value Value::undefined(std::string message) {
  Value v;
  v.text_ = std::make_shared<const std::string>(std::move(message));
  return v;
}

Value Value::unsafe(std::string message) {
  Value v = undefined(std::move(message));
  v.unsafe_ = true;
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.bool_ = b;
  return v;
}

Value Value::integer(std::int64_t i) {
  Value v;
  v.kind_ = Kind::Int;
  v.int_ = i;
  return v;
}

Value Value::floating(double d) {
  Value v;
  v.kind_ = Kind::Float;
  v.float_ = d;
  return v;
}

Value Value::string(std::string s) {
  if (s.size() > kMaxStringBytes) fail("string longer than " + std::to_string(kMaxStringBytes) + " bytes");
  Value v;
  v.kind_ = Kind::String;
  v.text_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::list(ValueList items, bool tuple) {
  Value v;
  v.kind_ = Kind::List;
  v.tuple_ = tuple;
  v.list_ = std::make_shared<const ValueList>(std::move(items));
  return v;
}

Value Value::dict(ValuePairs items) {
  Value v;
  v.kind_ = Kind::Dict;
  v.dict_ = std::make_shared<ValuePairs>(std::move(items));
  return v;
}

Value Value::namespaceObject(ValuePairs attributes) {
  Value v = dict(std::move(attributes));
  v.kind_ = Kind::Namespace;
  return v;
}

Value Value::callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn) {
  Value v;
  v.kind_ = Kind::Callable;
  v.callable_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

Value Value::iterator(std::string pythonType, ValueList items, std::string deferredError) {
  Value v;
  v.kind_ = Kind::Iterator;
  v.iterator_ = std::make_shared<IteratorState>(IteratorState{std::move(pythonType), std::move(items), 0, std::move(deferredError)});
  return v;
}

Value Value::fromJson(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return none();
    case nlohmann::ordered_json::value_t::boolean: return boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return integer(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) fail("integer in the context is larger than 64 bits");
      return integer(static_cast<std::int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return floating(j.get<double>());
    case nlohmann::ordered_json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      if (utf8::firstInvalidByte(s)) fail("a string in the context is not valid UTF-8");
      return string(s);
    }
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(fromJson(item));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      ValuePairs items;
      items.reserve(j.size());
      for (const auto& [key, item] : j.items()) {
        if (utf8::firstInvalidByte(key)) fail("a key in the context is not valid UTF-8");
        items.emplace_back(string(key), fromJson(item));
      }
      return dict(std::move(items));
    }
    default: fail("unsupported JSON value in the context");
  }
}

const void* Value::identity() const {
  switch (kind_) {
    case Kind::String: return text_.get();
    case Kind::List: return list_.get();
    case Kind::Dict: case Kind::Namespace: return dict_.get();
    case Kind::Callable: return callable_.get();
    case Kind::Iterator: return iterator_.get();
    default: return nullptr;
  }
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined: case Kind::None: return false;
    case Kind::Bool: return bool_;
    case Kind::Int: return int_ != 0;
    case Kind::Float: return float_ != 0;
    case Kind::String: return !text_->empty();
    case Kind::List: return !list_->empty();
    case Kind::Dict: return !dict_->empty();
    default: return true;
  }
}

const Value* Value::find(const Value& key) const {
  if (!dict_) return nullptr;
  for (const auto& [k, v] : *dict_)
    if (valuesEqual(k, key)) return &v;
  return nullptr;
}

const Value* Value::findAttribute(const std::string& name) const {
  if (!dict_) return nullptr;
  for (const auto& [k, v] : *dict_)
    if (k.isString() && k.asString() == name) return &v;
  return nullptr;
}

std::string Value::typeName() const {
  switch (kind_) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return tuple_ ? "tuple" : "list";
    case Kind::Dict: return "dict";
    case Kind::Namespace: return "Namespace";
    case Kind::Callable: return "function";
    case Kind::Iterator: return iterator_->pythonType;
  }
  return "object";
}

void failUndefined(const Value& v) {
  fail((v.isUnsafe() ? "SecurityError: " : "UndefinedError: ") + v.undefinedMessage());
}

bool valuesEqual(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.isNumber() && b.isNumber()) {
    if (a.kind() == K::Float || b.kind() == K::Float) return a.asDouble() == b.asDouble();
    return a.asInt() == b.asInt();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::Undefined: case K::None: return true;
    case K::String: return a.asString() == b.asString();
    case K::List: {
      if (a.isTuple() != b.isTuple() || a.asList().size() != b.asList().size()) return false;
      for (std::size_t i = 0; i < a.asList().size(); ++i)
        if (!valuesEqual(a.asList()[i], b.asList()[i])) return false;
      return true;
    }
    case K::Dict: {
      if (a.asDict().size() != b.asDict().size()) return false;
      for (const auto& [k, v] : a.asDict()) {
        const Value* other = b.find(k);
        if (!other || !valuesEqual(v, *other)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

namespace {

void appendRepr(const Value& v, std::string& out, int depth);

void appendItems(const Value& v, std::string& out, int depth) {
  using K = Value::Kind;
  if (depth > kMaxNesting) fail("value nested too deeply to print");
  if (v.kind() == K::List) {
    out += v.isTuple() ? '(' : '[';
    const auto& items = v.asList();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out += ", ";
      appendRepr(items[i], out, depth + 1);
    }
    if (v.isTuple() && items.size() == 1) out += ',';
    out += v.isTuple() ? ')' : ']';
    return;
  }
  out += '{';
  bool first = true;
  for (const auto& [k, item] : v.asDict()) {
    if (!first) out += ", ";
    first = false;
    appendRepr(k, out, depth + 1);
    out += ": ";
    appendRepr(item, out, depth + 1);
  }
  out += '}';
}

void appendRepr(const Value& v, std::string& out, int depth) {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::String: out += stringRepr(v.asString()); return;
    case K::Undefined: out += "Undefined"; return;
    case K::List: case K::Dict: appendItems(v, out, depth); return;
    case K::Namespace: out += "<Namespace "; appendItems(v, out, depth); out += '>'; return;
    default: out += toStr(v); return;
  }
}

}  // namespace

std::string toStr(const Value& v) {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::Undefined: return "";
    case K::None: return "None";
    case K::Bool: return v.asBool() ? "True" : "False";
    case K::Int: return std::to_string(v.asInt());
    case K::Float: return floatRepr(v.asDouble());
    case K::String: return v.asString();
    case K::Callable: return "<function " + v.asCallable().name + ">";
    case K::Iterator: {
      char address[32];
      std::snprintf(address, sizeof address, "%p", v.identity());
      return "<" + v.typeName() + " object at " + address + ">";
    }
    default: {
      std::string out;
      appendRepr(v, out, 0);
      return out;
    }
  }
}

std::string toRepr(const Value& v) {
  std::string out;
  appendRepr(v, out, 0);
  return out;
}

}  // namespace dfi::jinja::detail
