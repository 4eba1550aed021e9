#pragma once
// How the panels that read the session off the GUI thread (overview, compare, diagnosis) hand
// their work to a worker: `work` fills the result on `pool`, an exception it throws is kept as
// the result's `error`, and the result goes back to the panel's thread through `finish`
// (generation, result), where a panel drops results a newer request has made stale.

#include <exception>
#include <memory>
#include <utility>

#include <QMetaObject>
#include <QString>
#include <QThreadPool>

namespace dfi::ui {

// `finish` is the panel's own member (named inside the panel, so it may be private); Result
// has a QString `error`.
template <typename Panel, typename Result, typename Work>
void computeOnWorker(QThreadPool& pool, Panel* panel, void (Panel::*finish)(quint64, const std::shared_ptr<Result>&),
                     quint64 generation, std::shared_ptr<Result> result, Work work) {
  pool.start([panel, finish, generation, result = std::move(result), work = std::move(work)]() mutable {
    try {
      work(*result);
    } catch (const std::exception& e) {
      result->error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        panel, [panel, finish, generation, result] { (panel->*finish)(generation, result); }, Qt::QueuedConnection);
  });
}

}  // namespace dfi::ui
