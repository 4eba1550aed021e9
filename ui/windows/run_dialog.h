#pragma once
// Starts an evaluation or a diagnosis from the GUI: target, drafters, prompts, device, dtype,
// max new tokens and where the engine runs (a command prefix such as "ssh gpu-host"); an
// evaluation adds its modes, mask variants, DDTree budget, sampling and step counting, a
// diagnosis (`dflash-eval diagnose`, which picks its own modes, masks and anchors) a training
// dump and a time budget. Shows progress with ETA and a cancel button; the records land in a
// local session that the main window opens and follows while they arrive. Every path has a
// browse button, and each kind of form remembers what it last ran with (a diagnosis starts
// from the last evaluation's paths).

#include <optional>
#include <utility>
#include <vector>

#include <QDialog>

#include "engine/engine_client.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace dfi::ui {

class EngineClient;

class RunDialog : public QDialog {
  Q_OBJECT
 public:
  enum class Kind { Evaluation, Diagnosis };
  explicit RunDialog(QWidget* parent = nullptr, Kind kind = Kind::Evaluation);
  Kind kind() const { return kind_; }

  // Fills the form (tests, and "run again" from a session's settings).
  void setPaths(const QString& target, const QStringList& drafters, const QString& prompts, const QString& session);
  void setEngine(const QString& commandPrefix, const QString& enginePath);
  EngineLaunch launch() const;  // the engine as the fields name it
  EngineClient* client() const { return client_; }
  QString sessionPath() const;  // where the records go
  // What the form asks the engine for, as typed settings (dfi/settings/settings.h): an
  // evaluation's (the engine's "run" request), a diagnosis's (its "diagnose" request).
  settings::RunSettings runSettings() const;
  settings::DiagnoseSettings diagnoseSettings() const;

 signals:
  void sessionStarted(const QString& path);  // open and follow it
  void engineFailed(const QString& message);

 public slots:
  void startRun();

 private:
  enum class Browse { Directory, AddDirectory, Prompts, TrainingDump, TrainingTemplate, SaveFile, Executable };
  QString settingsGroup() const;
  QHBoxLayout* samplingRow();
  QLineEdit* pathField(const QString& name, const QString& placeholder);
  QWidget* withBrowse(QLineEdit* field, Browse kind);  // the field and its "Browse..." button
  void restoreForm();
  void rememberForm() const;
  std::vector<std::pair<QString, QLineEdit*>> formFields() const;  // settings key, field
  void setRunning(bool running);
  void countPrompts();
  // The form's own checks (a path left empty; with the engine here, a model or prompts file
  // that is not there), then settings::validate's, as the engine's: all before any file is touched.
  QString validationError() const;
  std::optional<session::OpenMode> chooseSessionMode();  // asks when the session file exists

  Kind kind_;
  QLineEdit *target_, *drafters_, *prompts_, *session_, *prefix_, *engine_;
  QLineEdit* chatTemplateKwargs_;  // a JSON object of template variables; optional
  QLineEdit* trainingDump_;        // a diagnosis's; optional
  QLineEdit* trainingTemplate_;    // a diagnosis's; optional
  QDoubleSpinBox* budgetMinutes_;  // a diagnosis's; 0: no budget
  QComboBox *device_, *dtype_, *stepCounting_;
  QCheckBox *live_, *teacherForced_, *ddtree_;
  QList<QCheckBox*> variants_;
  QSpinBox *budget_, *maxNewTokens_;
  QSpinBox* limit_;         // the first N prompts; 0: all
  QLabel* promptCount_;     // how many prompts the run takes, when the file is here
  QDoubleSpinBox *temperature_, *topP_;  // the live loop's sampling (0: greedy)
  QSpinBox *topK_, *seed_, *samples_;
  QProgressBar* progress_;
  QLabel* status_;
  QPlainTextEdit* summary_;
  QPushButton *run_, *cancel_;
  EngineClient* client_;
};

}  // namespace dfi::ui
