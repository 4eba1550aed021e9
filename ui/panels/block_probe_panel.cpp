#include "panels/block_probe_panel.h"

#include <QLabel>
#include <QPushButton>
#include <QShowEvent>

#include "session/session_context.h"

namespace dfi::ui {

BlockProbePanel::BlockProbePanel(SessionContext* context, const QString& emptyHeadline, const QString& fetchToolTip,
                                 QWidget* parent)
    : QWidget(parent),
      context_(context),
      headline_(new QLabel(emptyHeadline)),
      fetch_(new QPushButton(tr("Fetch from engine"))),
      status_(new QLabel),
      emptyHeadline_(emptyHeadline) {
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::PlainText);
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::PlainText);
  fetch_->setToolTip(fetchToolTip);
  fetch_->setEnabled(false);
  connect(fetch_, &QPushButton::clicked, this, &BlockProbePanel::fetchFromEngine);
  if (!context_) return;
  connect(context_, &SessionContext::inspectRequested, this, [this](qint64 step, const QString& engine) {
    fetch_->setEnabled(false);
    if (step_ && step == step_->stepId)
      status_->setText(tr("Asking the engine (%1) to inspect the block…").arg(engine));
  });
  connect(context_, &SessionContext::inspectAnswered, this, [this](const InspectAnswer& answer) { showAnswer(answer); });
  connect(context_, &SessionContext::inspectFailed, this, [this](const QString& message) {
    fetch_->setEnabled(step_.has_value());
    status_->setText(tr("The engine could not inspect this block: %1").arg(message));
  });
}

BlockProbePanel::~BlockProbePanel() {
  if (context_) context_->removeViewer(this);
}

void BlockProbePanel::attach() {
  if (!context_) return;
  context_->addViewer(this);
  if (context_->isOpen()) onSelectionChanged(context_->selection());  // made while a block is selected
}

QString BlockProbePanel::headline() const { return headline_->text(); }
QString BlockProbePanel::status() const { return status_->text(); }

void BlockProbePanel::onSessionOpened() { onSelectionChanged(context_->selection()); }

void BlockProbePanel::onSessionClosed() {
  selection_ = {};
  stale_ = false;
  loadSelection();
}

void BlockProbePanel::onSelectionChanged(const Selection& selection) {
  if (selection.step == selection_.step && selection.run == selection_.run && (step_ || stale_)) return;
  selection_ = selection;
  // Behind another tab the block is read when the panel is shown: every read here (probes of
  // every layer and head) would otherwise slow down each selection in the other panels.
  if (behindAnotherTab()) {
    stale_ = true;
    return;
  }
  loadSelection();
}

void BlockProbePanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) loadSelection();
}

bool BlockProbePanel::readSelectedStep() {
  stale_ = false;
  step_.reset();
  probes_ = {};
  if (context_ && context_->isOpen() && selection_.step != 0) step_ = context_->step(selection_.step);
  if (!step_) {
    headline_->setText(emptyHeadline_);
    return false;
  }
  probes_ = loadBlockProbes(*context_, step_->runId, step_->stepId);
  return true;
}

bool BlockProbePanel::hasEngine() const { return context_ && context_->canInspect(); }

bool BlockProbePanel::canFetch() const {
  return step_ && hasEngine() && context_->isOpen() && !context_->isInspecting();
}

void BlockProbePanel::fetchFromEngine() {
  if (!step_ || !hasEngine()) return;
  QString why;
  const auto request = inspectRequestFor(*context_, step_->stepId, &why);
  if (!request) {
    status_->setText(tr("Cannot ask the engine about this block: %1").arg(why));
    return;
  }
  context_->inspect(*request);
}

}  // namespace dfi::ui
