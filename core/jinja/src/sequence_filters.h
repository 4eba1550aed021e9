#pragma once
// The filters over sequences that need more than a line: jinja2's attribute paths, its sort
// and dedupe keys, select/reject (and the attribute forms), map and batch. They return plain
// lists; filters.cpp wraps the lazy ones as iterators.

#include <functional>

#include "value.h"

namespace dfi::jinja::detail {

// "a.b.0" reads nested items (digits index lists), as jinja2's make_attrgetter does.
Value attributePath(const Value& item, const Value& path);
// The key jinja2 sorts and deduplicates by: strings lowercased unless case_sensitive.
Value sortKey(const Value& v, bool caseSensitive);
// A stable sort by key, as Python's sorted().
ValueList sorted(ValueList items, bool reverse, const std::function<Value(const Value&)>& key);

ValueList selectItems(Interpreter& interp, const Value& seq, CallArgs& args, bool byAttribute, bool keep);
ValueList mapItems(Interpreter& interp, const Value& seq, CallArgs& args);
ValueList batchItems(const Value& seq, const CallArgs& args);

}  // namespace dfi::jinja::detail
