#include "panels/navigator.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QSignalBlocker>
#include <QTextDocument>
#include <QTimer>
#include <QTreeView>

#include "dfi/analysis/garble.h"

#include "session/session_context.h"
#include "models/navigator_filter.h"
#include "models/navigator_model.h"
#include "widgets/acceptance_bar_delegate.h"
#include "widgets/one_line_delegate.h"

namespace dfi::ui {

Navigator::Navigator(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      model_(new NavigatorModel(context, this)),
      filter_(new NavigatorFilter(this)),
      tree_(new QTreeView),
      search_(new QLineEdit),
      matches_(new QLabel),
      below_(new QCheckBox(tr("acceptance below"))),
      belowValue_(new QDoubleSpinBox),
      garble_(new QComboBox),
      run_(new QComboBox),
      tokenSearchDelay_(new QTimer(this)),
      regression_(new QCheckBox(tr("regressions:"))),
      baselineRun_(new QComboBox),
      worseRun_(new QComboBox),
      regressionMargin_(new QDoubleSpinBox) {
  filter_->setNavigatorModel(model_);
  tree_->setModel(filter_);
  tree_->setItemDelegate(new OneLineDelegate(tree_));  // a new prompt's rows are painted in one frame
  tree_->setItemDelegateForColumn(NavigatorModel::AcceptanceColumn,
                                  new AcceptanceBarDelegate(NavigatorModel::AcceptanceFractionRole, tree_));
  tree_->setSortingEnabled(true);
  tree_->sortByColumn(NavigatorModel::NameColumn, Qt::AscendingOrder);
  tree_->setUniformRowHeights(true);  // fast with many thousand steps
  tree_->setAlternatingRowColors(true);
  tree_->header()->setSectionResizeMode(NavigatorModel::NameColumn, QHeaderView::Stretch);
  tree_->header()->setStretchLastSection(false);
  tree_->header()->resizeSection(NavigatorModel::AcceptanceColumn, 120);
  tree_->header()->resizeSection(NavigatorModel::StepsColumn, 60);
  tree_->header()->resizeSection(NavigatorModel::GarbledColumn, 70);

  search_->setPlaceholderText(tr("Search prompts, runs, drafters, token text (Ctrl+F)"));
  garble_->addItem(tr("garble: off"), 0);
  std::uint8_t all = 0;
  for (const analysis::GarbleDetector& detector : analysis::garbleDetectors()) all |= detector.flag;
  garble_->addItem(tr("garbled: any detector"), all);
  for (const analysis::GarbleDetector& detector : analysis::garbleDetectors()) {
    garble_->addItem(tr("garbled: %1").arg(QString::fromUtf8(detector.name)),
                     detector.flag);
    garble_->setItemData(garble_->count() - 1,
                         QString::fromUtf8(detector.description),
                         Qt::ToolTipRole);
  }
  garble_->setToolTip(tr("Steps where a garble detector fired on what the drafter proposes: the accepted slots and "
                         "the first mismatch (the unreached tail after it, which nothing used, does not count)"));
  run_->setToolTip(tr("Only this run"));
  run_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  run_->setMinimumContentsLength(10);
  tokenSearchDelay_->setSingleShot(true);
  tokenSearchDelay_->setInterval(300);  // a pause in the typing: each search reads every step
  matches_->setWordWrap(true);
  matches_->setObjectName(QStringLiteral("filterMatches"));
  matches_->setTextFormat(Qt::RichText);
  connect(matches_, &QLabel::linkActivated, this, &Navigator::clearFilters);
  matches_->hide();
  search_->setClearButtonEnabled(true);
  belowValue_->setRange(1, 64);
  belowValue_->setDecimals(1);
  belowValue_->setValue(3);
  belowValue_->setToolTip(tr("Show steps whose accept length (accepted drafts + 1) is below this"));
  regression_->setToolTip(tr("Prompts whose mean acceptance with the second drafter is lower than with the first"));
  baselineRun_->setToolTip(tr("Baseline drafter"));
  for (QComboBox* box : {baselineRun_, worseRun_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(10);
  }
  worseRun_->setToolTip(tr("Drafter that may regress"));
  regressionMargin_->setRange(0, 64);
  regressionMargin_->setDecimals(2);
  regressionMargin_->setSingleStep(0.25);
  regressionMargin_->setValue(0.5);
  regressionMargin_->setPrefix(tr("by > "));
  regressionMargin_->setToolTip(tr("How much lower the prompt's mean accept length must be"));

  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(search_, 0, 0, 1, 4);
  layout->addWidget(below_, 1, 0);
  layout->addWidget(belowValue_, 1, 1);
  layout->addWidget(garble_, 1, 2, 1, 2);
  layout->addWidget(run_, 2, 0, 1, 4);
  layout->addWidget(regression_, 3, 0);
  layout->addWidget(regressionMargin_, 3, 1);
  // The two drafters share a row of their own: run names are long ("drafter-good/live/reference")
  // and the navigator is narrow on a small screen.
  auto* runs = new QHBoxLayout;
  runs->addWidget(baselineRun_, 1);
  runs->addWidget(worseRun_, 1);
  layout->addLayout(runs, 4, 0, 1, 4);
  layout->addWidget(matches_, 5, 0, 1, 4);
  layout->addWidget(tree_, 6, 0, 1, 4);
  layout->setColumnStretch(2, 1);

  connect(search_, &QLineEdit::textChanged, this, &Navigator::applyFilters);
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
    tokenSearchPending_ = !text.trimmed().isEmpty();
    if (tokenSearchPending_)
      tokenSearchDelay_->start();
    else
      tokenSearchDelay_->stop();
    updateMatches();
  });
  connect(tokenSearchDelay_, &QTimer::timeout, this, &Navigator::searchTokenTextNow);
  connect(model_, &NavigatorModel::tokenTextMatches, this,
          [this](const QString& query, const std::vector<session::StepId>& steps) {
            if (query != search_->text().trimmed()) return;  // typed on meanwhile
            tokenSearchPending_ = false;
            filter_->setTokenTextMatches(query, steps);
            openRunsWhenFiltered();
            updateMatches();
          });
  for (QCheckBox* box : {below_, regression_}) connect(box, &QCheckBox::toggled, this, &Navigator::applyFilters);
  for (QDoubleSpinBox* box : {belowValue_, regressionMargin_})
    connect(box, &QDoubleSpinBox::valueChanged, this, &Navigator::applyFilters);
  for (QComboBox* box : {baselineRun_, worseRun_, garble_, run_})
    connect(box, &QComboBox::currentIndexChanged, this, &Navigator::applyFilters);
  // After a load, or a relayout that opened nothing, a filter shows its runs open.
  connect(filter_, &QAbstractItemModel::modelReset, this, &Navigator::openRunsWhenFiltered);
  connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& current) { selectCurrent(current); });
  auto* find = new QShortcut(QKeySequence::Find, this);
  connect(find, &QShortcut::activated, this, [this] {
    search_->setFocus();
    search_->selectAll();
  });
  connect(model_, &NavigatorModel::loaded, this, &Navigator::updateRunChoices);
  if (context_) {
    model_->setTauConvention(context_->tauConvention());
    connect(context_, &SessionContext::tauConventionChanged, model_, &NavigatorModel::setTauConvention);
  }
  if (context_) context_->addViewer(this);
  model_->reload();
}

Navigator::~Navigator() {
  if (context_) context_->removeViewer(this);
}

void Navigator::updateRunChoices() {
  for (QComboBox* box : {baselineRun_, worseRun_, run_}) {
    const QSignalBlocker block(box);
    box->clear();
    if (box == run_) box->addItem(tr("all runs"));
    for (const auto& [id, name] : model_->runNames()) box->addItem(name, QVariant::fromValue(id));
  }
  if (worseRun_->count() > 1) worseRun_->setCurrentIndex(1);
  regression_->setEnabled(model_->runNames().size() > 1);
  applyFilters();
  if (!search_->text().trimmed().isEmpty()) searchTokenTextNow();  // the steps are new
  if (context_) onSelectionChanged(context_->selection());  // made while the tree was loading
}

QString Navigator::matchesText() const {
  if (matches_->isHidden()) return {};
  QTextDocument document;
  document.setHtml(matches_->text());
  QString text = document.toPlainText();
  text.remove(QStringLiteral(" Clear filters"));
  return text;
}

void Navigator::clearFilters() {
  const QSignalBlocker blockers[] = {QSignalBlocker(search_), QSignalBlocker(below_), QSignalBlocker(garble_),
                                     QSignalBlocker(run_), QSignalBlocker(regression_)};
  search_->clear();
  tokenSearchPending_ = false;
  tokenSearchDelay_->stop();
  below_->setChecked(false);
  garble_->setCurrentIndex(0);
  run_->setCurrentIndex(0);
  regression_->setChecked(false);
  applyFilters();
}

QStringList Navigator::activeFilterNames() const {
  QStringList names;
  if (!search_->text().trimmed().isEmpty()) names << tr("search \"%1\"").arg(search_->text().trimmed());
  if (below_->isChecked()) names << tr("acceptance below %1").arg(belowValue_->value());
  if (garble_->currentData().toUInt() != 0) names << garble_->currentText();
  if (run_->currentData().isValid()) names << tr("run %1").arg(run_->currentText());
  if (regression_->isChecked() && regression_->isEnabled())
    names << tr("%1 worse than %2 by > %3").arg(worseRun_->currentText(), baselineRun_->currentText())
                 .arg(regressionMargin_->value());
  return names;
}

void Navigator::showMatches(const QString& text, bool offerClear) {
  // A filter carried over from the last session may hide everything: name the filters that are
  // on and offer to clear them, so an empty tree is never a mystery.
  matches_->setText(text.toHtmlEscaped() +
                    (offerClear ? QStringLiteral(" <a href=\"clear\">%1</a>").arg(tr("Clear filters")) : QString()));
}

void Navigator::applyFilters() {
  filter_->setSearchText(search_->text());
  filter_->setMaxAcceptance(below_->isChecked() ? std::optional<double>(belowValue_->value()) : std::nullopt);
  filter_->setGarbleDetectors(static_cast<std::uint8_t>(garble_->currentData().toUInt()));
  filter_->setRun(run_->currentData().isValid() ? std::optional(run_->currentData().value<session::RunId>()) : std::nullopt);
  if (regression_->isChecked() && regression_->isEnabled() && baselineRun_->currentIndex() != worseRun_->currentIndex()) {
    filter_->setRegression(std::pair{baselineRun_->currentData().value<session::RunId>(),
                                     worseRun_->currentData().value<session::RunId>()},
                           regressionMargin_->value());
  } else {
    filter_->setRegression(std::nullopt, 0.0);
  }
  openRunsWhenFiltered();
  updateMatches();
}

void Navigator::searchTokenTextNow() {
  tokenSearchDelay_->stop();
  const QString query = search_->text().trimmed();
  tokenSearchPending_ = !query.isEmpty();
  if (tokenSearchPending_) model_->searchTokenText(query);
  updateMatches();
}

// Only the runs open: expanding every prompt put all matching steps (10k rows in a demo
// session) into the view, and each of them became a persistent index to move on every sort.
void Navigator::openRunsWhenFiltered() {
  if (!filter_->isActive()) return;
  for (int r = 0; r < filter_->rowCount(); ++r) tree_->expand(filter_->index(r, 0));
}

void Navigator::updateMatches() {
  const int prompts = filter_->shownPromptCount();
  const QString searching = tokenSearchPending_ ? tr(" Searching the steps' token text\u2026") : QString();
  const QStringList filters = activeFilterNames();
  if (!filter_->isActive())
    matches_->clear();
  else if (prompts == 0 && tokenSearchPending_)
    showMatches(tr("No prompt, run or drafter matches \"%1\"; searching the steps' token text\u2026")
                    .arg(search_->text().trimmed()), false);
  else if (prompts == 0 && filters.size() == 1 && !search_->text().trimmed().isEmpty())
    showMatches(tr("Nothing matches \"%1\" (searched: prompt texts and datasets, run names, drafters, "
                   "the steps' draft and target text).")
                    .arg(search_->text().trimmed()), true);
  else if (prompts == 0)
    showMatches(tr("Nothing matches these filters: %1.").arg(filters.join(QStringLiteral(", "))), true);
  else
    showMatches(tr("%n prompt(s) match", nullptr, prompts) +
                    tr(", %n step(s); open a prompt to see its steps.", nullptr, filter_->shownStepCount()) + searching,
                false);
  matches_->setVisible(filter_->isActive());
}

namespace {

// The node after (or before) `index` in depth-first order: a node's children follow it.
QModelIndex stepInOrder(const QAbstractItemModel& m, const QModelIndex& index, int direction) {
  if (direction > 0) {
    if (m.rowCount(index) > 0) return m.index(0, 0, index);
    for (QModelIndex at = index; at.isValid(); at = at.parent())
      if (at.row() + 1 < m.rowCount(at.parent())) return at.sibling(at.row() + 1, 0);
    return {};
  }
  if (!index.isValid()) return {};
  if (index.row() == 0) return index.parent();
  QModelIndex at = index.sibling(index.row() - 1, 0);
  while (m.rowCount(at) > 0) at = m.index(m.rowCount(at) - 1, 0, at);  // its last descendant
  return at;
}

}  // namespace

bool Navigator::selectNeighbour(int direction, bool garbledOnly) {
  const QAbstractItemModel& m = *tree_->model();
  QModelIndex at = tree_->currentIndex().siblingAtColumn(0);
  if (!at.isValid() && direction > 0 && m.rowCount() > 0) at = m.index(0, 0);  // from the top
  else at = stepInOrder(m, at, direction);
  for (; at.isValid(); at = stepInOrder(m, at, direction)) {
    if (at.data(NavigatorModel::KindRole).toInt() != NavigatorModel::StepNode) continue;
    if (garbledOnly && at.data(NavigatorModel::GarbledRole).toInt() == 0) continue;
    tree_->setCurrentIndex(at);  // selects it everywhere, through the context
    tree_->scrollTo(at);
    return true;
  }
  return false;
}

void Navigator::selectCurrent(const QModelIndex& proxyIndex) {
  if (syncing_ || !context_ || !proxyIndex.isValid()) return;
  context_->select(model_->selectionAt(filter_->mapToSource(proxyIndex)));
}

void Navigator::onSessionOpened() { model_->reload(); }

void Navigator::onSessionClosed() { model_->reload(); }

void Navigator::onSelectionChanged(const Selection& selection) {
  const QModelIndex proxy = filter_->mapFromSource(model_->indexOf(selection));
  if (!proxy.isValid() || proxy == tree_->currentIndex()) return;
  syncing_ = true;
  // The response this sync opened is closed again when the selection moves to another (one
  // the user opened stays open): following a selection around the session left a trail of
  // open responses, a few hundred rows each, which the tree lays out on every change.
  const QModelIndex response = proxy.parent();
  if (response != openedForSelection_) {
    if (openedForSelection_.isValid()) tree_->collapse(openedForSelection_);
    openedForSelection_ = response.isValid() && !tree_->isExpanded(response) ? QPersistentModelIndex(response)
                                                                               : QPersistentModelIndex();
  }
  tree_->setCurrentIndex(proxy);
  tree_->scrollTo(proxy);
  syncing_ = false;
}

void Navigator::onStepsAppended(const std::vector<session::StepRecord>& steps) { model_->appendSteps(steps); }

QWidget* Navigator::exportTarget() { return tree_; }

}  // namespace dfi::ui
