#pragma once
// The token panel: the selected block slot by slot (TokenTableModel) and, below it, the
// whole response with block boundaries and per-token acceptance colours (TokenStrip).
// Clicking a token of the response selects the step that committed it.

#include <optional>
#include <vector>

#include <QWidget>

#include "session/session_viewer.h"
#include "widgets/view_export.h"

class QLabel;
class QTableView;

namespace dfi::ui {

class TokenStrip;
class TokenTableModel;

class TokenView : public QWidget, public SessionViewer, public ExportableView {
  Q_OBJECT
 public:
  explicit TokenView(SessionContext* context, QWidget* parent = nullptr);
  ~TokenView() override;

  TokenTableModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  TokenStrip* strip() const { return strip_; }
  QString headline() const;

  void onSessionClosed() override;
  void onSelectionChanged(const Selection& selection) override;
  void onStepsAppended(const std::vector<session::StepRecord>& steps) override;

  QWidget* exportTarget() override { return this; }
  QString exportBaseName() const override { return QStringLiteral("tokens"); }
  CsvTable exportData() override;  // the block's table, slot by slot

 private:
  void loadResponse(session::RunId run, session::PromptId prompt);
  void showStep(const std::optional<session::StepRecord>& step);
  void showOptionalColumns();

  SessionContext* context_;
  QLabel* headline_;
  TokenTableModel* model_;
  QTableView* table_;
  TokenStrip* strip_;
  Selection response_;                     // run and prompt shown in the strip
  QString promptLabel_;                    // its first words
  std::vector<session::StepId> stepIds_;  // by step index, for clicks on the strip
};

}  // namespace dfi::ui
