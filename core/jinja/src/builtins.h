#pragma once
// The filters, tests and globals a template can name, and how the parser tells apart a name
// jinja2 does not know (an error, as in jinja2) from one this engine does not implement.

#include <string>
#include <string_view>

namespace dfi::jinja::detail {

class Value;
struct CallArgs;
class Interpreter;

enum class Availability { Implemented, NotImplemented, Unknown };
Availability filterAvailability(std::string_view name);
Availability testAvailability(std::string_view name);

// Apply filter `name` to `subject` (args.positional excludes the subject).
Value applyFilter(Interpreter& interp, const std::string& name, const Value& subject, CallArgs& args);
bool applyTest(Interpreter& interp, const std::string& name, const Value& subject, CallArgs& args);

// The globals of transformers' environment: range, namespace, dict, raise_exception,
// strftime_now, plus jinja2's cycler/joiner/lipsum as not supported.
bool isGlobalName(std::string_view name);
Value lookupGlobal(std::string_view name);

// obj.name for str, list, dict and namespace objects: a bound method, an item, or undefined.
Value getAttribute(const Value& object, const std::string& name);
// obj[key] with jinja2's fallback to attributes for string keys.
Value getItem(const Value& object, const Value& key);

}  // namespace dfi::jinja::detail
