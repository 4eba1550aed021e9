#include "panels/token_view.h"

#include <algorithm>
#include <unordered_map>

#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "session/session_context.h"
#include "dfi/analysis/garble.h"
#include "dfi/analysis/response_sequence.h"
#include "models/navigator_tree.h"
#include "models/token_table_model.h"
#include "widgets/token_strip.h"

namespace dfi::ui {
namespace {

QColor originColour(analysis::TokenOrigin origin) {
  switch (origin) {
    case analysis::TokenOrigin::Prompt: return QColor(0xe6, 0xe6, 0xe6);
    case analysis::TokenOrigin::FirstSample: return TokenTableModel::stateColour(TokenTableModel::SlotState::Anchor);
    case analysis::TokenOrigin::AcceptedDraft: return TokenTableModel::stateColour(TokenTableModel::SlotState::Accepted);
    case analysis::TokenOrigin::Bonus: return QColor(0xfb, 0xd8, 0xa8);
  }
  return {};
}

QString originText(const analysis::SequenceToken& token) {
  switch (token.origin) {
    case analysis::TokenOrigin::Prompt: return QObject::tr("prompt");
    case analysis::TokenOrigin::FirstSample: return QObject::tr("sampled after the prefill (step 0's anchor)");
    case analysis::TokenOrigin::AcceptedDraft: return QObject::tr("draft slot %1 accepted at step %2").arg(token.slot).arg(token.stepIndex);
    case analysis::TokenOrigin::Bonus: return QObject::tr("bonus token of step %1 (the target's, after %2 accepted)").arg(token.stepIndex).arg(token.slot - 1);
  }
  return {};
}

}  // namespace

TokenView::TokenView(SessionContext* context, QWidget* parent)
    : QWidget(parent),
      context_(context),
      headline_(new QLabel(tr("Select a step in the navigator."))),
      model_(new TokenTableModel(this)),
      table_(newTokenTable(model_)),
      strip_(new TokenStrip) {
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::PlainText);
  showOptionalColumns();  // none until a step asks for them
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  auto* scroll = new QScrollArea;
  scroll->setWidget(strip_);
  scroll->setWidgetResizable(true);
  auto* legend = new QLabel;
  QString swatches;
  for (analysis::TokenOrigin origin : {analysis::TokenOrigin::Prompt, analysis::TokenOrigin::FirstSample, analysis::TokenOrigin::AcceptedDraft, analysis::TokenOrigin::Bonus}) {
    static const char* names[] = {"prompt", "first sample", "accepted draft", "bonus (target)"};
    swatches += QStringLiteral("<span style=\"background:%1\">&nbsp;&nbsp;&nbsp;</span>&nbsp;%2&nbsp;&nbsp; ")
                    .arg(originColour(origin).name(), tr(names[static_cast<int>(origin)]));
  }
  legend->setText(swatches + tr("| bars: block boundaries; outlined: the selected step; "
                                 "<u style=\"color:%1\">underlined</u>: a garbled draft slot (hover for the pattern)")
                                  .arg(TokenTableModel::garbleColour().name()));
  legend->setWordWrap(true);  // never wider than the panel: a long line made the whole panel scroll sideways
  auto* response = new QWidget;
  auto* responseLayout = new QVBoxLayout(response);
  responseLayout->setContentsMargins(0, 0, 0, 0);
  responseLayout->addWidget(scroll, 1);
  responseLayout->addWidget(legend);
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(table_);
  splitter->addWidget(response);
  splitter->setStretchFactor(0, 3);  // the block's table first; the response strip scrolls
  splitter->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(headline_);
  layout->addWidget(splitter, 1);
  connect(strip_, &TokenStrip::stepClicked, this, [this](int stepIndex) {
    if (stepIndex < 0 || stepIndex >= static_cast<int>(stepIds_.size())) return;
    context_->select({response_.run, response_.prompt, stepIds_[static_cast<std::size_t>(stepIndex)]});
  });
  addExportMenu(table_, QStringLiteral("tokens"), [this] { return exportData(); });
  if (context_) context_->addViewer(this);
}

TokenView::~TokenView() {
  if (context_) context_->removeViewer(this);
}

CsvTable TokenView::exportData() { return csvOf(*model_); }

QString TokenView::headline() const { return headline_->text(); }

void TokenView::onSessionClosed() {
  response_ = {};
  promptLabel_.clear();
  stepIds_.clear();
  model_->clear();
  strip_->setChips({});
  headline_->setText(tr("Select a step in the navigator."));
}

void TokenView::loadResponse(session::RunId run, session::PromptId promptId) {
  const std::optional<session::PromptRecord> prompt = context_->prompt(run, promptId);
  const std::vector<session::StepRecord> steps = context_->steps(run, promptId);
  stepIds_.clear();
  for (const session::StepRecord& s : steps) {
    if (s.stepIndex >= static_cast<int>(stepIds_.size())) stepIds_.resize(static_cast<std::size_t>(s.stepIndex) + 1, 0);
    stepIds_[static_cast<std::size_t>(s.stepIndex)] = s.stepId;
  }
  const analysis::ResponseSequence sequence =
      analysis::ResponseSequence::build(prompt ? prompt->promptTokens : std::vector<session::TokenId>{}, steps);
  std::unordered_map<std::int32_t, const session::StepRecord*> byIndex;
  for (const session::StepRecord& s : steps) byIndex[s.stepIndex] = &s;
  // The draft slot behind a committed token: an accepted draft's own slot; for the bonus, the
  // first mismatch, whose draft the target replaced.
  auto garbleOf = [&](const analysis::SequenceToken& token) -> std::pair<std::uint8_t, session::TokenId> {
    const auto it = byIndex.find(token.stepIndex);
    if (it == byIndex.end() || token.slot < 1) return {0, 0};
    const auto slot = static_cast<std::size_t>(token.slot - 1);
    const session::StepRecord& step = *it->second;
    if (slot >= step.garbleFlags.size() || slot >= step.draftTokens.size()) return {0, 0};
    return {step.garbleFlags[slot], step.draftTokens[slot]};
  };
  std::vector<session::TokenId> ids;
  for (const analysis::SequenceToken& token : sequence.tokens) ids.push_back(token.id);
  context_->prefetchTokenTexts(ids);
  std::vector<TokenStrip::Chip> chips;
  int lastStep = -1;
  for (std::size_t position = 0; position < sequence.tokens.size(); ++position) {
    const analysis::SequenceToken& token = sequence.tokens[position];
    TokenStrip::Chip chip;
    chip.text = context_->tokenText(token.id);
    chip.colour = originColour(token.origin);
    chip.step = token.origin == analysis::TokenOrigin::Prompt ? -1 : token.stepIndex;
    chip.startsBlock = (token.origin == analysis::TokenOrigin::AcceptedDraft || token.origin == analysis::TokenOrigin::Bonus) &&
                       token.stepIndex != lastStep;
    if (chip.startsBlock) lastStep = token.stepIndex;
    chip.toolTip = tr("position %1: '%2' (id %3)\n%4").arg(position).arg(chip.text).arg(token.id).arg(originText(token));
    if (token.origin == analysis::TokenOrigin::AcceptedDraft || token.origin == analysis::TokenOrigin::Bonus) {
      if (const auto [flags, draft] = garbleOf(token); flags) {
        chip.underline = TokenTableModel::garbleColour();
        chip.toolTip += token.origin == analysis::TokenOrigin::Bonus
                            ? tr("\nThe drafter proposed '%1' here (slot %2, the first mismatch):\n%3")
                                  .arg(context_->tokenText(draft))
                                  .arg(token.slot)
                                  .arg(TokenTableModel::garbleExplanation(flags, true))
                            : QStringLiteral("\n") + TokenTableModel::garbleExplanation(flags, true);
      }
    }
    chips.push_back(std::move(chip));
  }
  strip_->setChips(std::move(chips));
  response_ = {run, promptId, 0};
  promptLabel_ = promptLabel(promptId, prompt ? QString::fromStdString(prompt->text) : QString());
}

// The tree path for DDTree steps, the selector for DFlash2 steps, the acceptance test for
// sampled steps, the confidence of DSpark steps, the overlap of teacher-forced steps: hidden
// where the step has none.
void TokenView::showOptionalColumns() {
  table_->setColumnHidden(TokenTableModel::TreePathColumn, !model_->hasTreePath());
  table_->setColumnHidden(TokenTableModel::SelectorColumn, !model_->hasSelector());
  table_->setColumnHidden(TokenTableModel::AcceptTestColumn, !model_->hasAcceptTest());
  table_->setColumnHidden(TokenTableModel::ConfidenceColumn, !model_->hasConfidence());
  table_->setColumnHidden(TokenTableModel::OverlapColumn, !model_->hasOverlap());
}

void TokenView::showStep(const std::optional<session::StepRecord>& step) {
  if (!step) {
    model_->clear();
    showOptionalColumns();
    strip_->setHighlightedStep(-1);
    headline_->setText(tr("Select a step to see its block slot by slot."));
    return;
  }
  const std::optional<session::RunRecord> run = context_->run(step->runId);
  const bool ddtree = step->mode == session::EvaluationMode::DDTree;
  std::vector<session::TokenId> ids{step->anchorToken, step->bonusToken};
  for (const auto* tokens : {&step->draftTokens, &step->targetTokens, &step->topKIds, &step->candidateIds})
    ids.insert(ids.end(), tokens->begin(), tokens->end());
  context_->prefetchTokenTexts(ids);
  model_->setBlock(*step, run ? run->topK : 0, [this](session::TokenId id) { return context_->tokenText(id); },
                   ddtree ? context_->tree(step->stepId) : std::nullopt);
  showOptionalColumns();
  strip_->setHighlightedStep(step->stepIndex);
  // The slot that decided the block, whatever panel chose it: rows 0..accepted are the anchor
  // and the accepted slots, the next the first mismatch.
  const int decisive = std::min(model_->rowCount() - 1, std::max(step->acceptedCount, 0) + 1);
  if (decisive >= 0) table_->scrollTo(model_->index(decisive, 0), QAbstractItemView::EnsureVisible);
  const QString where = tr("%1, \"%2\", step %3: anchor '%4' at position %5")
                            .arg(context_->runName(step->runId))
                            .arg(promptLabel_)
                            .arg(step->stepIndex)
                            .arg(context_->tokenText(step->anchorToken))
                            .arg(step->anchorPosition);
  const QString bonus = tr("bonus '%1' (accept length %2)").arg(context_->tokenText(step->bonusToken)).arg(step->acceptLength());
  const session::StepSummary summary = session::summarize(*step);
  const QString garble =
      summary.proposedGarble || summary.tailGarble
          ? tr("; garble in what it proposes: %1, in the unreached tail: %2")
                .arg(summary.proposedGarble ? QString::fromStdString(analysis::garbleFlagNames(summary.proposedGarble)) : tr("none"),
                     summary.tailGarble ? QString::fromStdString(analysis::garbleFlagNames(summary.tailGarble)) : tr("none"))
          : QString();
  if (ddtree)
    headline_->setText(tr("%1; the draft chain accepted %2 of %3, the tree's accepted path %4; %5")
                           .arg(where)
                           .arg(chainAcceptedCount(*step))
                           .arg(step->draftTokens.size())
                           .arg(step->acceptedCount)
                           .arg(bonus) +
                       garble);
  else
    headline_->setText(tr("%1; %2 of %3 drafts accepted, %4")
                           .arg(where)
                           .arg(step->acceptedCount)
                           .arg(step->draftTokens.size())
                           .arg(bonus) +
                       garble);
}

void TokenView::onSelectionChanged(const Selection& selection) {
  if (!context_ || selection.prompt < 0) return;
  if (selection.run != response_.run || selection.prompt != response_.prompt) loadResponse(selection.run, selection.prompt);
  showStep(selection.step ? context_->step(selection.step) : std::nullopt);
}

void TokenView::onStepsAppended(const std::vector<session::StepRecord>& steps) {
  for (const session::StepRecord& s : steps) {
    if (s.runId == response_.run && s.promptId == response_.prompt) {
      loadResponse(response_.run, response_.prompt);
      return;
    }
  }
}

}  // namespace dfi::ui
