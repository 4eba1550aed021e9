#include "widgets/recent_files_menu.h"

#include <QDir>
#include <QFileInfo>
#include <QMap>
#include <QSettings>

namespace dfi::ui {
namespace {

constexpr int kMaxRecent = 10;
const QString kKey = QStringLiteral("recentFiles");

}  // namespace

RecentFilesMenu::RecentFilesMenu(QWidget* parent) : QMenu(tr("Open &Recent"), parent) { rebuild(); }

QStringList RecentFilesMenu::files() const { return QSettings().value(kKey).toStringList(); }

void RecentFilesMenu::add(const QString& path) {
  // One entry per file, however it was reached (a relative path, a symbolic link, "..").
  const QFileInfo info(path);
  const QString absolute = info.exists() ? info.canonicalFilePath() : info.absoluteFilePath();
  QStringList list = files();
  list.removeAll(absolute);
  list.prepend(absolute);
  while (list.size() > kMaxRecent) list.removeLast();
  QSettings().setValue(kKey, list);
  rebuild();
}

void RecentFilesMenu::rebuild() {
  clear();
  const QStringList list = files();
  QMap<QString, int> sameName;  // entries are named by file; two of one name also by folder
  for (const QString& path : list) ++sameName[QFileInfo(path).fileName()];
  for (int i = 0; i < list.size(); ++i) {
    const QString path = list[i];
    const QFileInfo info(path);
    const QString name = sameName[info.fileName()] > 1
                             ? QStringLiteral("%1 (%2)").arg(info.fileName(), QDir::toNativeSeparators(info.absolutePath()))
                             : info.fileName();
    QAction* action = addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(name));
    action->setToolTip(path);
    action->setStatusTip(path);
    action->setEnabled(QFileInfo::exists(path));  // kept: the disk may only be unmounted
    connect(action, &QAction::triggered, this, [this, path] { emit fileChosen(path); });
  }
  if (list.isEmpty()) {
    addAction(tr("(none)"))->setEnabled(false);
    return;
  }
  addSeparator();
  addAction(tr("Clear the list"), this, [this] {
    QSettings().remove(kKey);
    rebuild();
  });
}

}  // namespace dfi::ui
