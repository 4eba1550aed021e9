// View-free pieces: the token table model under QAbstractItemModelTester, and the log relay
// bringing spdlog lines from other threads (the response rebuilt from step records:
// tests/core/analysis/test_response_sequence.cpp).

#include <thread>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include "context/log_relay.h"
#include "dfi/base/log.h"
#include "models/token_table_model.h"
#include "session_fixture.h"

using namespace dfi::ui;
using dfi::session::StepRecord;

class TestModels : public QObject {
  Q_OBJECT
 private slots:
  void tokenTableShowsTheBlock() {
    TokenTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    StepRecord step = dfi::fixture::fixtureStep(0, 0, 1, 20, 7, 4);  // accepts 5 of 7
    QCOMPARE(step.acceptedCount, 5);
    model.setBlock(step, 4, [](dfi::session::TokenId id) { return QStringLiteral("tok%1").arg(id); });
    QCOMPARE(model.rowCount(), 8);
    QCOMPARE(model.index(0, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("anchor"));
    QCOMPARE(model.index(5, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("accepted"));
    QCOMPARE(model.index(6, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("first mismatch"));
    QCOMPARE(model.index(7, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("rejected"));
    QCOMPARE(model.index(6, TokenTableModel::PositionColumn).data().toLongLong(), 26);
    QCOMPARE(model.index(6, TokenTableModel::TargetRankColumn).data().toString(), QStringLiteral("2"));
    QCOMPARE(model.index(6, TokenTableModel::DraftProbColumn).data().toString(), QStringLiteral("0.550"));
    // A target outside the stored top-k has no rank.
    step.topKIds[6 * 4 + 1] = 38;
    model.setBlock(step, 4, [](dfi::session::TokenId id) { return QString::number(id); });
    QCOMPARE(model.index(7, TokenTableModel::TargetRankColumn).data().toString(), QStringLiteral("> 4"));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void entropyIsOverTheStoredTopK() {
    const float uniform[] = {0.25f, 0.25f, 0.25f, 0.25f};
    QVERIFY(std::abs(TokenTableModel::topKEntropy(uniform, 4) - std::log(4.0)) < 1e-6);
    const float certain[] = {1.0f, 0.0f};
    QCOMPARE(TokenTableModel::topKEntropy(certain, 2), 0.0);
  }

  // Lines logged on other threads arrive on the GUI thread, in order, batched.
  void logLinesCrossThreads() {
    LogRelay relay;
    QStringList received;
    int batches = 0;
    connect(&relay, &LogRelay::linesArrived, this, [&](const QVector<LogLine>& lines) {
      QCOMPARE(QThread::currentThread(), qApp->thread());
      ++batches;
      for (const LogLine& line : lines) received << line.text;
    });
    std::thread worker([] {
      for (int i = 0; i < 200; ++i) dfi::logger("test")->info("line {}", i);
    });
    worker.join();
    QTRY_COMPARE(received.size(), 200);
    QCOMPARE(received.front(), QStringLiteral("line 0"));
    QCOMPARE(received.back(), QStringLiteral("line 199"));
    QVERIFY(batches < 200);  // one queued call per burst, not one per line
  }
};

QTEST_MAIN(TestModels)
#include "test_models.moc"
