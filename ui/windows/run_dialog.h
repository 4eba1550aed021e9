#pragma once
// Starts an evaluation from the GUI: target, drafters, prompts, device, dtype, modes, mask
// variants, DDTree budget, and where the engine runs (a command prefix such as "ssh gpu-host").
// Shows progress with ETA and a cancel button; the records land in a local session that the
// main window opens and follows while they arrive. Every path has a browse button, and the
// form remembers what the last run used.

#include <utility>
#include <vector>

#include <QDialog>

#include "context/engine_client.h"

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
  explicit RunDialog(QWidget* parent = nullptr);

  // Fills the form (tests, and "run again" from a session's settings).
  void setPaths(const QString& target, const QStringList& drafters, const QString& prompts, const QString& session);
  void setEngine(const QString& commandPrefix, const QString& enginePath);
  EngineLaunch launch() const;  // the engine as the fields name it
  EngineClient* client() const { return client_; }

 signals:
  void sessionStarted(const QString& path);  // open and follow it
  void engineFailed(const QString& message);

 public slots:
  void startRun();

 private:
  enum class Browse { Directory, AddDirectory, OpenFile, SaveFile, Executable };
  QHBoxLayout* samplingRow();
  QLineEdit* pathField(const QString& name, const QString& placeholder);
  QWidget* withBrowse(QLineEdit* field, Browse kind);  // the field and its "Browse..." button
  void restoreForm();
  void rememberForm() const;
  std::vector<std::pair<QString, QLineEdit*>> formFields() const;  // settings key, field
  void setRunning(bool running);
  QString validationError() const;

  QLineEdit *target_, *drafters_, *prompts_, *session_, *prefix_, *engine_;
  QComboBox *device_, *dtype_, *stepCounting_;
  QCheckBox *live_, *teacherForced_, *ddtree_;
  QList<QCheckBox*> variants_;
  QSpinBox *budget_, *maxNewTokens_;
  QDoubleSpinBox *temperature_, *topP_;  // the live loop's sampling (0: greedy)
  QSpinBox *topK_, *seed_, *samples_;
  QProgressBar* progress_;
  QLabel* status_;
  QPlainTextEdit* summary_;
  QPushButton *run_, *cancel_;
  EngineClient* client_;
};

}  // namespace dfi::ui
