// The tree view: the DDTree layout rebuilt from a block's stored top-k (sizes, lanes, rows,
// the accepted path against the target's verifiable tokens), a recorded tree, and the panel
// following the selection and the budget slider on a session written with the Writer.
// Screenshot: <build>/screenshots/tree_view.png.

#include <QCheckBox>
#include <QtTest>

#include <cmath>

#include "context/file_session_source.h"
#include "context/session_context.h"
#include "gui_test_support.h"
#include "models/tree_layout.h"
#include "session_fixture.h"
#include "widgets/tree_canvas.h"
#include "windows/tree_view.h"

using namespace dfi;
using namespace dfi::ui;

namespace {

constexpr int kSlots = 7, kTopK = 4;

// Leaves are rows 0..n-1 once each; a parent is level with its first child.
void checkRows(const TreeLayout& layout) {
  std::vector<int> leafRows;
  std::vector<std::vector<int>> childRows(layout.nodes.size());
  for (std::size_t i = 1; i < layout.nodes.size(); ++i) {
    const TreeNode& n = layout.nodes[i];
    QVERIFY(n.parent >= 0 && static_cast<std::size_t>(n.parent) < i);
    QCOMPARE(n.depth, layout.nodes[static_cast<std::size_t>(n.parent)].depth + 1);
    childRows[static_cast<std::size_t>(n.parent)].push_back(n.row);
  }
  for (std::size_t i = 0; i < layout.nodes.size(); ++i) {
    const std::vector<int>& rows = childRows[i];
    if (rows.empty()) {
      leafRows.push_back(layout.nodes[i].row);
      continue;
    }
    QCOMPARE(layout.nodes[i].row, *std::min_element(rows.begin(), rows.end()));
  }
  std::sort(leafRows.begin(), leafRows.end());
  QCOMPARE(static_cast<int>(leafRows.size()), layout.rowCount);
  for (int r = 0; r < layout.rowCount; ++r) QCOMPARE(leafRows[static_cast<std::size_t>(r)], r);
}

session::StepRecord blockWithMismatch() {
  // Prompt 1, step 2 of drafter-a: some drafts accepted, then a mismatch whose target token is
  // second in that slot's top-k (the fixture's design).
  session::StepRecord step = test::fixtureStep(0, 1, 2, 20, kSlots, kTopK);
  step.runId = 1;
  return step;
}

}  // namespace

class TestTreeView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;
  session::StepId recordedStep_ = 0;

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("tree.dfi"));
    session::Writer writer(path_.toStdString(), {.mode = session::OpenMode::Overwrite});
    test::writeFixture(writer);
    // A verified tree for step 3: root, two children, one grandchild on the accepted path.
    recordedStep_ = 3;
    writer.addTree({.stepId = recordedStep_, .nodeTokens = {5, 6, 7, 8},
                    .nodeLogProbs = {0.0f, std::log(0.6f), std::log(0.3f), std::log(0.6f * 0.5f)},
                    .parents = {-1, 0, 0, 1}, .acceptedPath = {0, 1, 3}});
    writer.close();
  }

  void rebuiltTreeHasItsBudgetAndLanes() {
    const session::StepRecord step = blockWithMismatch();
    const TreeLayout tree = TreeLayout::build(step, kTopK, 64);
    QCOMPARE(tree.nodes.size(), std::size_t{65});
    QCOMPARE(tree.nodes[0].token, step.anchorToken);
    QVERIFY(tree.depthCount >= 2 && tree.depthCount <= kSlots + 1);
    checkRows(tree);
    for (std::size_t i = 1; i < tree.nodes.size(); ++i) {
      const TreeNode& n = tree.nodes[i];
      // Probabilities multiply down the path; the node's own is its slot's top-k entry.
      const TreeNode& parent = tree.nodes[static_cast<std::size_t>(n.parent)];
      QVERIFY(std::abs(n.pathProbability - parent.pathProbability * n.probability) < 1e-6);
      QVERIFY(std::abs(n.probability - step.topKProbs[static_cast<std::size_t>((n.depth - 1) * kTopK + n.rank)]) < 1e-5);
    }
  }

  void treeAcceptsTheTargetTokenTheChainMissed() {
    const session::StepRecord step = blockWithMismatch();
    QVERIFY(step.acceptedCount < kSlots);
    // The verifiable target tokens stop at the first mismatch (its target token, the bonus).
    QCOMPARE(verifiableTargetTokens(step).size(), static_cast<std::size_t>(step.acceptedCount) + 1);
    // 256 nodes reach the mismatch slot's second token (weight 0.55^6 x 0.25; 108 paths weigh more).
    const TreeLayout tree = TreeLayout::build(step, kTopK, 256);
    // The chain's accepted drafts plus the target's token at the mismatch, second in its slot.
    QCOMPARE(tree.acceptedPath.size(), static_cast<std::size_t>(step.acceptedCount) + 2);
    for (std::size_t d = 1; d < tree.acceptedPath.size(); ++d) {
      const TreeNode& n = tree.nodes[static_cast<std::size_t>(tree.acceptedPath[d])];
      QVERIFY(n.accepted);
      QCOMPARE(n.token, step.targetTokens[d - 1]);
    }
    int accepted = 0;
    for (const TreeNode& n : tree.nodes) accepted += n.accepted;
    QCOMPARE(static_cast<std::size_t>(accepted), tree.acceptedPath.size());

    // Budget 1: the draft's first token only.
    const TreeLayout one = TreeLayout::build(step, kTopK, 1);
    QCOMPARE(one.nodes.size(), std::size_t{2});
    QCOMPARE(one.nodes[1].token, step.draftTokens[0]);
    // Teacher-forced blocks can be checked at every depth.
    session::StepRecord forced = step;
    forced.mode = session::EvaluationMode::TeacherForced;
    QCOMPARE(verifiableTargetTokens(forced).size(), static_cast<std::size_t>(kSlots));
    // No stored top-k: the root alone.
    session::StepRecord bare = step;
    bare.topKIds.clear();
    bare.topKProbs.clear();
    QCOMPARE(TreeLayout::build(bare, kTopK, 64).nodes.size(), std::size_t{1});
  }

  void recordedTreeKeepsItsPath() {
    const session::TreeRecord record{.stepId = 1, .nodeTokens = {5, 6, 7, 8},
                                     .nodeLogProbs = {0.0f, std::log(0.6f), std::log(0.3f), std::log(0.3f)},
                                     .parents = {-1, 0, 0, 1}, .acceptedPath = {0, 1, 3}};
    const TreeLayout tree = TreeLayout::fromRecord(record);
    checkRows(tree);
    QCOMPARE(tree.rowCount, 2);
    QVERIFY(std::abs(tree.nodes[3].probability - 0.5) < 1e-5);  // 0.3 / 0.6
    QVERIFY(tree.nodes[3].accepted && tree.nodes[1].accepted && !tree.nodes[2].accepted);
    QCOMPARE(tree.nodes[3].rank, -1);
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
    QVERIFY2(view.headline().contains(QStringLiteral("accepts %1 draft").arg(step.acceptedCount + 1)),
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
};

QTEST_MAIN(TestTreeView)
#include "test_tree_view.moc"
