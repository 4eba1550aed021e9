#pragma once
// How the navigator's models (NavigatorModel and the NavigatorFilter over it) name an index's
// parent by its internal id, in rows of the model the index belongs to: 0 = root (the index is
// a run), (run+1) << 32 = a run (the index is one of its prompts), (run+1) << 32 | (prompt+1) =
// a prompt of that run (the index is one of its steps). Both models pack ids the same way.

#include <QtGlobal>

namespace dfi::ui::navigator_ids {

static_assert(sizeof(quintptr) >= 8, "a run and a prompt row share one internal id");

// The internal id of a child of run `runRow`'s prompt `promptRow`; promptRow -1: of the run.
inline quintptr childId(int runRow, int promptRow) {
  return (static_cast<quintptr>(runRow + 1) << 32) | static_cast<quintptr>(promptRow + 1);
}
// The run row an internal id names (-1 for the root's id, 0).
inline int runOfId(quintptr id) { return static_cast<int>(id >> 32) - 1; }
// The prompt row an internal id names; -1 when it names a run.
inline int promptOfId(quintptr id) { return static_cast<int>(id & 0xffffffffu) - 1; }

}  // namespace dfi::ui::navigator_ids
