#pragma once
// Where the GUI finds `dflash-eval` when it runs it locally: $DFLASH_EVAL when set (it always
// wins, and a wrong one is an error rather than a silent fall-back), else beside the inspector
// (an installed pair), else the build tree's app/eval (the inspector is app/inspector there),
// else PATH. Every place looked at is kept, so "not found" can say what was tried and how to
// set it. Used for File > Run's default engine and the inspect requests' engine.

#include <QString>
#include <QStringList>

namespace dfi::ui {

struct EngineLocation {
  QString path;       // empty: not found
  QStringList tried;  // each place looked at, in order, as "what: where"

  bool found() const { return !path.isEmpty(); }
  // Why no engine was found: the places tried and how to point the GUI at one.
  QString notFoundMessage() const;
};

inline constexpr char kEngineName[] = "dflash-eval";

// From this process: $DFLASH_EVAL, QCoreApplication::applicationDirPath() and $PATH.
EngineLocation locateEngine();
// The same search over given places (tests).
EngineLocation locateEngine(const QString& dflashEvalVariable, const QString& applicationDir, const QString& pathVariable);

// The engine to start for `typed` (the Run dialog's field, an inspect launch): a bare
// "dflash-eval" or an empty field means "find it"; anything else is used as given.
bool needsLocating(const QString& typed);

}  // namespace dfi::ui
