#include "engine/engine_locator.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include <QCoreApplication>

namespace dfi::ui {
namespace {

bool isExecutableFile(const QString& path) {
  const QFileInfo info(path);
  return info.isFile() && info.isExecutable();
}

}  // namespace

QString EngineLocation::notFoundMessage() const {
  return QStringLiteral("the engine (%1) was not found; looked at:\n  %2\nSet the environment variable DFLASH_EVAL to the "
                        "dflash-eval executable, put it on PATH, or choose it in File > Run Evaluation > Engine.")
      .arg(QLatin1String(kEngineName), tried.join(QStringLiteral("\n  ")));
}

EngineLocation locateEngine(const QString& dflashEvalVariable, const QString& applicationDir, const QString& pathVariable) {
  EngineLocation location;
  if (!dflashEvalVariable.isEmpty()) {
    // An explicit choice is never replaced by a guess: a wrong one is reported as such.
    location.tried << QStringLiteral("DFLASH_EVAL: %1").arg(dflashEvalVariable);
    if (isExecutableFile(dflashEvalVariable)) location.path = QFileInfo(dflashEvalVariable).absoluteFilePath();
    return location;
  }
  location.tried << QStringLiteral("DFLASH_EVAL: not set");
  const QString name = QLatin1String(kEngineName);
  const QDir dir(applicationDir);
  for (const auto& [what, candidate] : {std::pair{QStringLiteral("beside the inspector"), dir.filePath(name)},
                                        std::pair{QStringLiteral("the build tree's app/eval"),
                                                  QDir::cleanPath(dir.filePath(QStringLiteral("../eval/") + name))}}) {
    location.tried << QStringLiteral("%1: %2").arg(what, candidate);
    if (isExecutableFile(candidate)) {
      location.path = candidate;
      return location;
    }
  }
  const QStringList pathDirs = pathVariable.split(QDir::listSeparator(), Qt::SkipEmptyParts);
  location.tried << QStringLiteral("PATH: %1").arg(pathDirs.isEmpty() ? QStringLiteral("(empty)") : pathDirs.join(QDir::listSeparator()));
  if (!pathDirs.isEmpty()) location.path = QStandardPaths::findExecutable(name, pathDirs);
  return location;
}

EngineLocation locateEngine() {
  return locateEngine(qEnvironmentVariable("DFLASH_EVAL"), QCoreApplication::applicationDirPath(),
                      qEnvironmentVariable("PATH"));
}

bool needsLocating(const QString& typed) {
  const QString t = typed.trimmed();
  return t.isEmpty() || t == QLatin1String(kEngineName);
}

}  // namespace dfi::ui
