#include "run_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "context/engine_client.h"
#include "dfi/analysis/attention_mask.h"

namespace dfi::ui {
namespace {

std::vector<std::string> toStrings(const QStringList& list) {
  std::vector<std::string> out;
  for (const QString& s : list) out.push_back(s.trimmed().toStdString());
  return out;
}

QString formatSeconds(double s) {
  return s < 90 ? QStringLiteral("%1 s").arg(qRound(s)) : QStringLiteral("%1 min").arg(s / 60, 0, 'f', 1);
}

}  // namespace

RunDialog::RunDialog(QWidget* parent) : QDialog(parent), client_(new EngineClient(this)) {
  setWindowTitle(tr("Run an evaluation"));
  auto* form = new QFormLayout;
  target_ = pathField(tr("target model directory (config.json, *.safetensors, tokenizer.json)"));
  drafters_ = pathField(tr("drafter directories, separated by ';'"));
  prompts_ = pathField(tr("prompts .jsonl"));
  session_ = pathField(tr("session file to write (.dfi)"));
  prefix_ = pathField(tr("optional: a command prefix, e.g. ssh gpu-host"));
  engine_ = pathField(tr("engine executable on that machine"));
  engine_->setText(QStringLiteral("dflash-eval"));
  device_ = new QComboBox;
  device_->setEditable(true);
  device_->addItems({QStringLiteral("cpu"), QStringLiteral("cuda:0"), QStringLiteral("cuda:0,cuda:1")});
  dtype_ = new QComboBox;
  dtype_->addItems({QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16")});
  auto* modes = new QHBoxLayout;
  live_ = new QCheckBox(tr("live"));
  teacherForced_ = new QCheckBox(tr("teacher-forced"));
  ddtree_ = new QCheckBox(tr("DDTree"));
  for (QCheckBox* c : {live_, teacherForced_, ddtree_}) {
    c->setChecked(true);
    modes->addWidget(c);
  }
  auto* variantRow = new QHBoxLayout;
  for (analysis::MaskVariant v : analysis::kAllMaskVariants) {
    auto* box = new QCheckBox(QString::fromUtf8(analysis::maskVariantName(v).data()));
    box->setChecked(v == analysis::MaskVariant::Reference || v == analysis::MaskVariant::AnchorVisible);
    variants_ << box;
    variantRow->addWidget(box);
  }
  budget_ = new QSpinBox;
  budget_->setRange(1, 1024);
  budget_->setValue(8);
  maxNewTokens_ = new QSpinBox;
  maxNewTokens_->setRange(1, 32768);
  maxNewTokens_->setValue(128);
  form->addRow(tr("Target"), target_);
  form->addRow(tr("Drafters"), drafters_);
  form->addRow(tr("Prompts"), prompts_);
  form->addRow(tr("Session"), session_);
  form->addRow(tr("Run on"), prefix_);
  form->addRow(tr("Engine"), engine_);
  form->addRow(tr("Device"), device_);
  form->addRow(tr("Dtype"), dtype_);
  form->addRow(tr("Modes"), modes);
  form->addRow(tr("Mask variants"), variantRow);
  form->addRow(tr("DDTree budget"), budget_);
  form->addRow(tr("Max new tokens"), maxNewTokens_);

  progress_ = new QProgressBar;
  status_ = new QLabel(tr("Not started"));
  status_->setWordWrap(true);
  summary_ = new QPlainTextEdit;
  summary_->setReadOnly(true);
  summary_->setPlaceholderText(tr("The tau of each run appears here when the evaluation ends."));
  run_ = new QPushButton(tr("Run"));
  cancel_ = new QPushButton(tr("Cancel run"));
  cancel_->setEnabled(false);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  buttons->addButton(run_, QDialogButtonBox::ActionRole);
  buttons->addButton(cancel_, QDialogButtonBox::ActionRole);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(summary_);
  layout->addWidget(buttons);

  connect(run_, &QPushButton::clicked, this, &RunDialog::startRun);
  connect(cancel_, &QPushButton::clicked, client_, &EngineClient::cancel);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::hide);
  connect(client_, &EngineClient::engineReady, status_, &QLabel::setText);
  connect(client_, &EngineClient::sessionCreated, this, &RunDialog::sessionStarted);
  connect(client_, &EngineClient::progress, this, [this](qint64 done, qint64 total, double eta, const QString& current) {
    progress_->setRange(0, static_cast<int>(total));
    progress_->setValue(static_cast<int>(done));
    status_->setText(tr("%1 — %2 of %3 done, about %4 left").arg(current).arg(done).arg(total).arg(formatSeconds(eta)));
  });
  connect(client_, &EngineClient::finished, this, [this](const QString& summary) {
    setRunning(false);
    status_->setText(tr("Finished"));
    summary_->setPlainText(summary);
  });
  connect(client_, &EngineClient::failed, this, [this](const QString& message) {
    setRunning(false);
    status_->setText(tr("Failed"));
    summary_->setPlainText(message);
    emit engineFailed(message);
  });
}

QLineEdit* RunDialog::pathField(const QString& placeholder) {
  auto* field = new QLineEdit;
  field->setPlaceholderText(placeholder);
  field->setMinimumWidth(420);
  return field;
}

void RunDialog::setPaths(const QString& target, const QStringList& drafters, const QString& prompts,
                         const QString& session) {
  target_->setText(target);
  drafters_->setText(drafters.join(';'));
  prompts_->setText(prompts);
  session_->setText(session);
}

void RunDialog::setEngine(const QString& commandPrefix, const QString& enginePath) {
  prefix_->setText(commandPrefix);
  engine_->setText(enginePath);
}

EngineLaunch RunDialog::launch() const {
  EngineLaunch launch;
  launch.commandPrefix = QProcess::splitCommand(prefix_->text());
  launch.enginePath = engine_->text().trimmed();
  return launch;
}

QString RunDialog::validationError() const {
  if (target_->text().trimmed().isEmpty()) return tr("Choose a target model directory.");
  if (drafters_->text().trimmed().isEmpty()) return tr("Choose at least one drafter directory.");
  if (prompts_->text().trimmed().isEmpty()) return tr("Choose a prompts file.");
  if (session_->text().trimmed().isEmpty()) return tr("Choose where to write the session.");
  if (!live_->isChecked() && !teacherForced_->isChecked() && !ddtree_->isChecked()) return tr("Choose a mode.");
  if (std::none_of(variants_.begin(), variants_.end(), [](QCheckBox* b) { return b->isChecked(); }))
    return tr("Choose a mask variant.");
  return {};
}

void RunDialog::startRun() {
  if (const QString error = validationError(); !error.isEmpty()) {
    status_->setText(error);
    return;
  }
  protocol::RunOptions options;
  options.target = target_->text().trimmed().toStdString();
  options.drafters = toStrings(drafters_->text().split(';', Qt::SkipEmptyParts));
  options.prompts = prompts_->text().trimmed().toStdString();
  options.modes.clear();
  if (live_->isChecked()) options.modes.push_back("live");
  if (teacherForced_->isChecked()) options.modes.push_back("teacher-forced");
  if (ddtree_->isChecked()) options.modes.push_back("ddtree");
  options.maskVariants.clear();
  for (QCheckBox* box : variants_)
    if (box->isChecked()) options.maskVariants.push_back(box->text().toStdString());
  options.device = device_->currentText().toStdString();
  options.dtype = dtype_->currentText().toStdString();
  options.ddtreeBudget = budget_->value();
  options.maxNewTokens = maxNewTokens_->value();
  const EngineLaunch engine = launch();
  summary_->clear();
  progress_->setRange(0, 0);  // busy until the first progress frame
  status_->setText(tr("Starting the engine…"));
  setRunning(true);
  client_->start(engine, options, session_->text().trimmed());
}

void RunDialog::setRunning(bool running) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  if (!running) progress_->setRange(0, std::max(progress_->maximum(), 1));
}

}  // namespace dfi::ui
