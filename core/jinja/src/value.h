#pragma once
// The values a template computes with, modelled on the Python objects jinja2 sees: None,
// bool, int, float, str, list/tuple, dict (insertion ordered), jinja2's Undefined,
// transformers' Namespace (the only mutable object) and callables (macros, globals, methods).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace dfi::jinja::detail {

class Value;
class Interpreter;
using ValueList = std::vector<Value>;
using ValuePairs = std::vector<std::pair<Value, Value>>;

struct CallArgs;

// What jinja2's lazy filters (select, map, unique, reverse...) return: a one-shot Python
// iterator. It is always truthy, has no len(), cannot be indexed, and iterating it again yields
// only what is left. Its items are computed up front; an error met doing so is kept and raised
// when the iterator is consumed, as Python raises it then.
struct IteratorState {
  std::string pythonType;  // "generator", "list_reverseiterator", ...
  ValueList items;
  std::size_t position = 0;
  std::string deferredError;
};

// A callable value: a macro, a global function, a bound method or loop.cycle.
struct Callable {
  std::string name;
  std::function<Value(Interpreter&, CallArgs&)> call;
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable, Iterator };

  Value() = default;  // Undefined
  static Value undefined(std::string message);
  // An attribute the sandbox refuses: undefined, but using it raises SecurityError.
  static Value unsafe(std::string message);
  static Value none();
  static Value boolean(bool b);
  static Value integer(std::int64_t i);
  static Value floating(double d);
  static Value string(std::string s);
  static Value list(ValueList items, bool tuple = false);
  static Value dict(ValuePairs items);
  static Value namespaceObject(ValuePairs attributes);
  static Value callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn);
  static Value iterator(std::string pythonType, ValueList items, std::string deferredError = {});
  static Value fromJson(const nlohmann::ordered_json& j);

  Kind kind() const { return kind_; }
  bool isUndefined() const { return kind_ == Kind::Undefined; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isString() const { return kind_ == Kind::String; }
  bool isNumber() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool isTuple() const { return kind_ == Kind::List && tuple_; }
  bool isUnsafe() const { return unsafe_; }

  bool asBool() const { return bool_; }
  std::int64_t asInt() const { return kind_ == Kind::Bool ? (bool_ ? 1 : 0) : int_; }
  double asDouble() const { return kind_ == Kind::Float ? float_ : static_cast<double>(asInt()); }
  const std::string& asString() const { return *text_; }  // String, and an Undefined's message
  const ValueList& asList() const { return *list_; }
  const ValuePairs& asDict() const { return *dict_; }   // Dict and Namespace
  ValuePairs& namespaceAttributes() const { return *dict_; }
  const Callable& asCallable() const { return *callable_; }
  IteratorState& iteratorState() const { return *iterator_; }
  const void* identity() const;  // for `is sameas` and cycle detection

  // Python truthiness.
  bool truthy() const;
  // A dict's value for key, or nullptr.
  const Value* find(const Value& key) const;
  const Value* findAttribute(const std::string& name) const;

  std::string typeName() const;  // Python's type name, for error messages
  // Why an Undefined is undefined ("'x' is undefined", or the sandbox's refusal).
  std::string undefinedMessage() const { return text_ ? *text_ : "value is undefined"; }

 private:
  Kind kind_ = Kind::Undefined;
  bool bool_ = false;
  bool tuple_ = false;
  bool unsafe_ = false;
  std::int64_t int_ = 0;
  double float_ = 0;
  std::shared_ptr<const std::string> text_;
  std::shared_ptr<const ValueList> list_;
  std::shared_ptr<ValuePairs> dict_;
  std::shared_ptr<const Callable> callable_;
  std::shared_ptr<IteratorState> iterator_;
};

struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keyword;
  std::size_t offset = 0;  // where the call is, for errors
};

// Using an undefined value (jinja2's UndefinedError, or SecurityError for a refused attribute).
[[noreturn]] void failUndefined(const Value& v);

// Python's ==, as jinja2 compares (1 == 1.0 == True, lists and dicts element-wise).
bool valuesEqual(const Value& a, const Value& b);
// str(value): what {{ }} prints.
std::string toStr(const Value& v);
// repr(value): how lists and dicts print their items.
std::string toRepr(const Value& v);

}  // namespace dfi::jinja::detail
