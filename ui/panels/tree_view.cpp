#include "panels/tree_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include "session/run_drafter_config.h"
#include "session/session_context.h"
#include "dfi/analysis/tree_layout.h"
#include "models/token_table_model.h"
#include "widgets/tree_canvas.h"

namespace dfi::ui {
namespace {

constexpr int kMaxBudget = 1024;
constexpr int kDefaultBudget = 64;

}  // namespace

TreeView::TreeView(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      headline_(new QLabel(tr("Select a step to see its DDTree."))),
      recorded_(new QCheckBox(tr("recorded tree"))),
      slider_(new QSlider(Qt::Horizontal)),
      budget_(new QSpinBox),
      canvas_(new TreeCanvas) {
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::PlainText);
  headline_->setMinimumHeight(2 * fontMetrics().height() + 4);  // two wrapped lines, never clipped
  recorded_->setToolTip(tr("Show the tree the engine verified at this step (DDTree runs record one)"));
  recorded_->setEnabled(false);
  slider_->setRange(1, kMaxBudget);
  budget_->setRange(1, kMaxBudget);
  budget_->setSuffix(tr(" nodes"));
  budget_->setToolTip(tr("DDTree budget: the nodes of the tree rebuilt from the block's stored top-k"));
  slider_->setValue(kDefaultBudget);
  budget_->setValue(kDefaultBudget);
  connect(slider_, &QSlider::valueChanged, budget_, &QSpinBox::setValue);
  connect(budget_, &QSpinBox::valueChanged, slider_, &QSlider::setValue);
  connect(budget_, &QSpinBox::valueChanged, this, [this] {
    if (recorded_->isChecked()) {
      recorded_->setChecked(false);  // moving the budget asks for a rebuilt tree (toggled rebuilds)
    } else {
      rebuild();
    }
  });
  connect(recorded_, &QCheckBox::toggled, this, &TreeView::rebuild);

  auto* scroll = new QScrollArea;
  scroll->setWidget(canvas_);
  scroll->setWidgetResizable(false);
  scroll->setBackgroundRole(QPalette::Base);
  auto* legend = new QLabel;
  QString swatches;
  const std::pair<QColor, QString> entries[] = {{TreeCanvas::rootColour(), tr("anchor (root)")},
                                                {TreeCanvas::acceptedColour(), tr("accepted path")},
                                                {TreeCanvas::nodeColour(), tr("drafted, not accepted")}};
  for (const auto& [colour, name] : entries)
    swatches += QStringLiteral("<span style=\"background:%1\">&nbsp;&nbsp;&nbsp;</span>&nbsp;%2&nbsp;&nbsp; ")
                    .arg(colour.name(), name);
  legend->setText(swatches + tr("| p: the token's probability in its slot (bar under each node)"));

  auto* controls = new QHBoxLayout;
  controls->addWidget(recorded_);
  controls->addWidget(new QLabel(tr("budget")));
  controls->addWidget(slider_, 1);
  controls->addWidget(budget_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(headline_);
  layout->addLayout(controls);
  layout->addWidget(scroll, 1);
  layout->addWidget(legend);
  addExportMenu(canvas_, QStringLiteral("tree"), [this] { return exportData(); });
  if (context_) context_->addViewer(this);
}

TreeView::~TreeView() {
  if (context_) context_->removeViewer(this);
}

QString TreeView::headline() const { return headline_->text(); }

int TreeView::budget() const { return budget_->value(); }

void TreeView::setBudget(int budget) { budget_->setValue(budget); }

void TreeView::setShowRecorded(bool recorded) { recorded_->setChecked(recorded); }

QWidget* TreeView::exportTarget() { return canvas_; }

CsvTable TreeView::exportData() {
  CsvTable table{{tr("node"), tr("parent"), tr("depth"), tr("token_id"), tr("token"), tr("probability"),
                  tr("path_probability"), tr("rank"), tr("accepted")},
                 {}};
  const analysis::TreeLayout& tree = canvas_->tree();
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const analysis::TreeNode& n = tree.nodes[i];
    table.rows.push_back({QString::number(i), QString::number(n.parent), QString::number(n.depth),
                          QString::number(n.token), context_ ? context_->tokenText(n.token) : QString(),
                          QString::number(n.probability, 'g', 6), QString::number(n.pathProbability, 'g', 6),
                          n.rank < 0 ? QString() : QString::number(n.rank + 1), n.accepted ? tr("yes") : tr("no")});
  }
  return table;
}

void TreeView::onSessionClosed() {
  step_.reset();
  recordedTree_.reset();
  recorded_->setEnabled(false);
  rebuild();
}

void TreeView::onSelectionChanged(const Selection& selection) {
  if (!context_ || !selection.step) return;  // a run or prompt keeps the block on show
  step_ = context_->step(selection.step);
  if (!step_) return;
  const std::optional<session::RunRecord> run = context_->run(step_->runId);
  topK_ = run ? run->topK : 0;
  const std::optional<modelspec::DrafterConfig> drafter = run ? runDrafterConfig(*run) : std::nullopt;
  markov_ = drafter && drafter->dspark && drafter->dspark->markovRank > 0;
  recordedTree_ = context_->tree(step_->stepId);
  const QSignalBlocker block(recorded_);
  recorded_->setEnabled(recordedTree_.has_value() && !markov_);
  recorded_->setChecked(recordedTree_.has_value());
  slider_->setEnabled(!markov_);
  budget_->setEnabled(!markov_);
  rebuild();
}

void TreeView::rebuild() {
  if (!step_) {
    canvas_->clear();
    headline_->setText(tr("Select a step to see its DDTree."));
    return;
  }
  if (markov_ && !recordedTree_) {
    canvas_->clear();
    headline_->setText(tr("Prompt %1, step %2: this drafter's Markov head makes each slot depend on the branch above "
                          "it, so its tree cannot be rebuilt from the step's top-k; select a step of its DDTree run")
                           .arg(step_->promptId)
                           .arg(step_->stepIndex));
    return;
  }
  const bool showRecorded = (recorded_->isChecked() || markov_) && recordedTree_;
  analysis::TreeLayout layout = showRecorded ? analysis::TreeLayout::fromRecord(*recordedTree_) : analysis::TreeLayout::build(*step_, topK_, budget());
  std::vector<QString> texts;
  texts.reserve(layout.nodes.size());
  for (const analysis::TreeNode& node : layout.nodes) texts.push_back(context_->tokenText(node.token));
  std::vector<QString> targets;
  for (session::TokenId token : analysis::verifiableTargetTokens(*step_)) targets.push_back(context_->tokenText(token));

  const int treeAccepted = static_cast<int>(layout.acceptedPath.size()) - 1;
  QString text = showRecorded ? tr("Prompt %1, step %2: the recorded tree, %3 nodes")
                                    .arg(step_->promptId).arg(step_->stepIndex).arg(layout.nodes.size() - 1)
                              : tr("Prompt %1, step %2: DDTree of %3 nodes rebuilt from the stored top-%4")
                                    .arg(step_->promptId).arg(step_->stepIndex).arg(layout.nodes.size() - 1).arg(topK_);
  text += tr("; the tree's accepted path has %1 draft token(s), the block's draft chain (top-1 per slot) accepted %2.")
              .arg(treeAccepted)
              .arg(chainAcceptedCount(*step_));
  if (!showRecorded && step_->mode != session::EvaluationMode::TeacherForced)
    text += tr(" Paths are checked up to the first mismatch only: the target's tokens after it were not computed.");
  if (!showRecorded && layout.nodes.size() == 1) text += tr(" (The run stored no top-k for this block.)");
  headline_->setText(text);
  canvas_->setTree(std::move(layout), std::move(texts), std::move(targets));
}

}  // namespace dfi::ui
