// The tree view: the panel following the selection and the budget slider on a session written
// with the Writer (the layout it draws: tests/core/analysis/test_tree_layout.cpp).
// Screenshot: <build>/screenshots/tree_view.png.

#include <QCheckBox>
#include <QTableView>
#include <QtTest>

#include <cmath>

#include "session/file_session_source.h"
#include "session/session_context.h"
#include "gui_test_support.h"
#include "session_fixture.h"
#include "models/token_table_model.h"
#include "widgets/tree_canvas.h"
#include "panels/token_view.h"
#include "panels/tree_view.h"

using namespace dfi;
using namespace dfi::ui;

class TestTreeView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;
  session::StepId recordedStep_ = 0;
  session::StepId ddtreeStep_ = 0;

  // A DDTree step whose draft chain and accepted path part at depth 3: the chain drafts
  // a b X d e, the target's tokens are a b c d f, the tree holds the chain and the candidate
  // c (rank 2 at depth 3) with d below it, so the tree accepts a b c d (4) where the chain
  // accepts a b (2), and the chain's slot 4 equals the target yet is not accepted.
  static constexpr session::TokenId a = 21, b = 22, c = 23, d = 24, e = 25, f = 26, X = 27;
  static std::pair<session::StepRecord, session::TreeRecord> knownDDTreeStep(session::RunId run) {
    session::StepRecord step;
    step.runId = run;
    step.mode = session::EvaluationMode::DDTree;
    step.anchorPosition = 10;
    step.anchorToken = 3;
    step.draftTokens = {a, b, X, d, e};
    step.targetTokens = {a, b, c, d, f};
    step.acceptedCount = 4;  // the tree's
    step.bonusToken = f;
    step.maskVariant = "reference";
    session::TreeRecord tree{.nodeTokens = {3, a, b, X, d, e, c, d},
                             .nodeLogProbs = {0, -0.1f, -0.2f, -0.5f, -0.6f, -0.7f, -1.5f, -1.6f},
                             .parents = {-1, 0, 1, 2, 3, 4, 2, 6},
                             .acceptedPath = {0, 1, 2, 6, 7}};
    return {step, tree};
  }

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("tree.dfi"));
    session::Writer writer(path_.toStdString(), {.mode = session::OpenMode::Overwrite});
    fixture::writeFixture(writer);
    // A verified tree for step 3: root, two children, one grandchild on the accepted path.
    recordedStep_ = 3;
    writer.addTree({.stepId = recordedStep_, .nodeTokens = {5, 6, 7, 8},
                    .nodeLogProbs = {0.0f, std::log(0.6f), std::log(0.3f), std::log(0.6f * 0.5f)},
                    .parents = {-1, 0, 0, 1}, .acceptedPath = {0, 1, 3}});
    session::RunRecord ddtree{.name = "drafter-a/ddtree-8/reference", .blockSize = 6, .topK = 0};
    ddtree.mode = session::EvaluationMode::DDTree;
    const session::RunId run = writer.addRun(ddtree);
    writer.addPrompt({.runId = run, .promptId = 0, .text = "Question 0", .promptTokens = fixture::fixturePromptTokens(0)});
    auto [step, tree] = knownDDTreeStep(run);
    ddtreeStep_ = writer.addStep(step);
    tree.stepId = ddtreeStep_;
    writer.addTree(tree);
    writer.close();
  }

  void panelFollowsSelectionAndBudget() {
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    TreeView view(&context);
    view.resize(1000, 700);
    view.show();
    QVERIFY(context.open(path_));
    const auto steps = context.steps(1, 1);
    const session::StepRecord& step = steps.at(2);
    context.select({1, 1, step.stepId});
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t(view.budget() + 1));
    view.setBudget(256);
    QVERIFY2(view.headline().contains(QStringLiteral("accepted path has %1 draft").arg(step.acceptedCount + 1)),
             qPrintable(view.headline()));
    view.setBudget(5);
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t{6});
    view.setBudget(256);

    // The accepted path is drawn in the accepted colour, the root in the anchor colour.
    const QImage picture = view.canvas()->grab().toImage();
    const int acceptedNode = view.canvas()->tree().acceptedPath.back();
    const QRect box = view.canvas()->nodeRect(acceptedNode);
    QVERIFY(test::similarColour(picture.pixelColor(box.left() + 5, box.center().y()), TreeCanvas::acceptedColour()));
    const QRect root = view.canvas()->nodeRect(0);
    QVERIFY(test::similarColour(picture.pixelColor(root.left() + 5, root.center().y()), TreeCanvas::rootColour()));
    QVERIFY(view.canvas()->nodeToolTip(acceptedNode).contains(QLatin1String("accepted")));
    const CsvTable nodes = view.exportData();  // one row per node, for a spreadsheet
    QCOMPARE(nodes.rows.size(), std::size_t{257});
    QCOMPARE(nodes.header.size(), 9);
    QCOMPARE(nodes.rows[static_cast<std::size_t>(acceptedNode)].back(), QStringLiteral("yes"));
    QCOMPARE(view.canvas()->nodeAt(box.center()), acceptedNode);
    test::saveScreenshot(&view, QStringLiteral("tree_view"));

    // A block with a recorded tree shows it; moving the budget rebuilds from the top-k.
    context.select({1, 0, recordedStep_});
    auto* recorded = view.findChild<QCheckBox*>();
    QVERIFY(recorded->isEnabled() && recorded->isChecked());
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t{4});
    QCOMPARE(view.canvas()->tree().acceptedPath, (std::vector<int>{0, 1, 3}));
    view.setBudget(10);
    QVERIFY(!recorded->isChecked());
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t{11});

    context.close();
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t{0});
  }

  // The chain's verdict and the tree's accepted path are shown apart, each labelled: in the
  // token table, its headline and the tree panel's headline.
  void ddtreeVerdictsOfChainAndTreeAreSeparate() {
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    TokenView tokens(&context);
    TreeView tree(&context);
    QVERIFY(tokens.table()->isColumnHidden(TokenTableModel::TreePathColumn));  // nothing chosen yet
    QVERIFY(context.open(path_));
    const auto step = context.step(ddtreeStep_);
    QVERIFY(step.has_value());
    QCOMPARE(chainAcceptedCount(*step), 2);
    context.select({step->runId, 0, ddtreeStep_});

    using State = TokenTableModel::SlotState;
    TokenTableModel* model = tokens.model();
    QCOMPARE(model->headerData(TokenTableModel::VerdictColumn, Qt::Horizontal).toString(), QStringLiteral("Chain verdict"));
    QCOMPARE(model->headerData(TokenTableModel::TreePathColumn, Qt::Horizontal).toString(), QStringLiteral("Tree path"));
    QVERIFY(!tokens.table()->isColumnHidden(TokenTableModel::TreePathColumn));
    const std::vector<State> chain = {State::Anchor, State::Accepted, State::Accepted, State::FirstMismatch,
                                      State::NotReached, State::NotReached};
    const QStringList path = {QString(), QStringLiteral("t21"), QStringLiteral("t22"), QStringLiteral("t23"),
                              QStringLiteral("t24"), QString()};
    for (int row = 0; row < 6; ++row) {
      QCOMPARE(State(model->index(row, 0).data(TokenTableModel::SlotStateRole).toInt()), chain[row]);
      QCOMPARE(model->index(row, TokenTableModel::TreePathColumn).data().toString(), path[row]);
    }
    // Slot 4: the chain's draft equals the target, but the chain stopped at slot 3.
    QCOMPARE(model->index(4, TokenTableModel::DraftColumn).data().toString(),
             model->index(4, TokenTableModel::TargetColumn).data().toString());
    QVERIFY(model->index(3, TokenTableModel::TreePathColumn).data(Qt::ToolTipRole).toString().contains(
        QStringLiteral("the chain drafted 't27'")));
    QVERIFY2(tokens.headline().contains(QStringLiteral("the draft chain accepted 2 of 5, the tree's accepted path 4")),
             qPrintable(tokens.headline()));
    QVERIFY2(tree.headline().contains(QStringLiteral("accepted path has 4 draft token(s), the block's draft chain "
                                                     "(top-1 per slot) accepted 2")),
             qPrintable(tree.headline()));

    // A live step has one verdict and no tree column.
    const auto live = context.steps(1, 1).at(2);
    context.select({1, 1, live.stepId});
    QVERIFY(tokens.table()->isColumnHidden(TokenTableModel::TreePathColumn));
    QCOMPARE(model->headerData(TokenTableModel::VerdictColumn, Qt::Horizontal).toString(), QStringLiteral("Verdict"));
  }
};

QTEST_MAIN(TestTreeView)
#include "test_tree_view.moc"
