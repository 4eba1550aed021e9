#include "widgets/recent_files_menu.h"

#include <QFileInfo>
#include <QSettings>

namespace dfi::ui {
namespace {

constexpr int kMaxRecent = 10;
const QString kKey = QStringLiteral("recentFiles");

}  // namespace

RecentFilesMenu::RecentFilesMenu(QWidget* parent) : QMenu(tr("Open &Recent"), parent) { rebuild(); }

QStringList RecentFilesMenu::files() const { return QSettings().value(kKey).toStringList(); }

void RecentFilesMenu::add(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
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
  for (int i = 0; i < list.size(); ++i) {
    const QString path = list[i];
    QAction* action = addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()));
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
