#include "engine/inspect_client.h"

#include <QProcess>

#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/session/writer.h"

namespace dfi::ui {

InspectClient::InspectClient(QObject* parent)
    : QObject(parent),
      engine_({.record = [this](protocol::Record record) { keep(std::move(record)); },
               .reply = [this](const protocol::Reply& reply) { handleReply(reply); }}) {
  // The engine is located when the first request starts it (engine_locator.h: DFLASH_EVAL,
  // beside the inspector, the build tree, PATH); DFI_ENGINE_PREFIX ("ssh gpu-host") runs it
  // elsewhere.
  launch_.commandPrefix = QProcess::splitCommand(qEnvironmentVariable("DFI_ENGINE_PREFIX"));
  connect(&engine_, &EngineProcess::failed, this, &InspectClient::fail);
  connect(&engine_, &EngineProcess::exited, this, [this](const QString& how, const QString& log) {
    if (active_) fail(QStringLiteral("the engine %1 during the inspect request\n%2").arg(how, log));
  });
}

InspectClient::~InspectClient() { stop(); }

void InspectClient::setLaunch(const EngineLaunch& launch) {
  const bool changed =
      launch.commandPrefix != launch_.commandPrefix || launch.enginePath != launch_.enginePath;
  launch_ = launch;
  if (changed) stop();
}

void InspectClient::stop() { engine_.stop(); }

void InspectClient::inspect(protocol::InspectRequest request, const QString& sessionPath) {
  if (active_) return fail(QStringLiteral("an inspect request is already in progress"));
  if (!engine_.running()) {
    QString notFound;
    if (!engine_.locate(launch_, &notFound)) return fail(notFound);
    engine_.start();
  }
  active_ = nextRequest_++;
  sessionPath_ = sessionPath;
  answer_ = {};
  answer_.run = request.runId;
  answer_.step = request.stepId;
  request.requestId = active_;
  engine_.send(request);
  emit requested(answer_.step);
}

void InspectClient::keep(protocol::Record record) {
  if (!active_) return;
  // The engine keys the records to the run and step the request named, so they are stored
  // under the ids they carry; the re-drafted step itself is the recorded one again and is not
  // stored a second time.
  if (auto* t = std::get_if<session::TensorRecord>(&record))
    answer_.tensors.push_back(std::move(*t));
  else if (auto* s = std::get_if<session::StatisticRecord>(&record))
    answer_.statistics.push_back(std::move(*s));
}

void InspectClient::handleReply(const protocol::Reply& reply) {
  std::visit(protocol::Overloaded{
                 [](const protocol::Hello&) {},     // its version checked by EngineProcess
                 [](const protocol::Progress&) {},  // runs only
                 [this](const protocol::Done& done) {
                   if (done.requestId == active_) finish();
                 },
                 [this](const protocol::ErrorReply& error) {
                   // -1: a request the engine could not read, which can only be ours
                   if (error.requestId == active_ || error.requestId == protocol::kNoRequest)
                     fail(QString::fromStdString(error.message));
                 }},
             reply);
}

void InspectClient::finish() {
  active_ = 0;
  try {
    session::Writer writer(sessionPath_.toStdString(), {.mode = session::OpenMode::Append});
    for (const auto& t : answer_.tensors) writer.addTensor(t);
    for (const auto& s : answer_.statistics) writer.addStatistic(s);
    writer.close();
    answer_.stored = true;
  } catch (const Error& e) {
    answer_.storeError = QString::fromStdString(e.what());
    logger("ui")->warn("inspect answer kept in memory only, {} cannot be written: {}",
                       sessionPath_.toStdString(), e.what());
  }
  emit answered(answer_);
}

void InspectClient::fail(const QString& message) {
  active_ = 0;
  logger("ui")->error("{}", message.toStdString());
  emit failed(message);
}

}  // namespace dfi::ui
