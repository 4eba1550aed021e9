// MaskLayout: the cells the mask view draws, checked against the rules of docs/dflash.md 2.3/4.4.

#include <QtTest>

#include "dfi/base/error.h"
#include "models/mask_layout.h"

using dfi::analysis::LayerAttention;
using dfi::analysis::MaskReason;
using dfi::analysis::MaskVariant;
using namespace dfi::ui;

namespace {

MaskScene inference(MaskVariant variant, std::int64_t anchor, int blockSize) {
  MaskScene scene;
  scene.spec.variant = variant;
  scene.spec.blockSize = blockSize;
  scene.anchor = anchor;
  return scene;
}

}  // namespace

class TestMaskLayout : public QObject {
  Q_OBJECT
 private slots:
  void inferenceColumnsAreContextThenBlock() {
    const MaskLayout layout(inference(MaskVariant::Reference, 8, 4));
    QCOMPARE(layout.rows(), 4);
    QCOMPARE(layout.columns(), 9 + 4);  // positions 0..8 (the anchor's own column too), 4 slots
    QCOMPARE(layout.contextColumns(), 9);
    for (int slot = 0; slot < 4; ++slot) {
      QCOMPARE(layout.value(slot, 7), int(kAllowed));  // strictly before the anchor
      QCOMPARE(layout.value(slot, 8), int(kMasked));   // the anchor's feature is not a key
      QCOMPARE(layout.describe(slot, 8).a.reason, MaskReason::AnchorFeature);
      for (int key = 0; key < 4; ++key) QCOMPARE(layout.value(slot, 9 + key), int(kAllowed));  // bidirectional
    }
  }

  void anchorVisibleSeesTheAnchorColumn() {
    const MaskLayout layout(inference(MaskVariant::AnchorVisible, 8, 4));
    QCOMPARE(layout.columns(), 13);  // same picture size as the reference: diffable
    QCOMPARE(layout.value(0, 8), int(kAllowed));
  }

  void blockCausalHidesLaterSlots() {
    const MaskLayout layout(inference(MaskVariant::BlockCausal, 8, 4));
    QCOMPARE(layout.value(1, 9 + 1), int(kAllowed));
    QCOMPARE(layout.value(1, 9 + 2), int(kMasked));
    QCOMPARE(layout.describe(1, 9 + 2).a.reason, MaskReason::OwnBlockLater);
  }

  void diffMarksOnlyDisagreement() {
    MaskScene scene = inference(MaskVariant::Reference, 8, 4);
    scene.diffAgainst = MaskVariant::AnchorVisible;
    const MaskLayout layout(scene);
    QVERIFY(layout.isDiff());
    for (int slot = 0; slot < 4; ++slot) {
      for (int column = 0; column < layout.columns(); ++column) {
        const int expected = column == 8 ? kDiffer : kBothAllowed;
        QCOMPARE(layout.value(slot, column), expected);
      }
    }
    const MaskCellInfo info = layout.describe(0, 8);
    QVERIFY(info.b.has_value());
    QVERIFY(!info.a.allowed);
    QVERIFY(info.b->allowed);
  }

  void slidingWindowCutsOldContext() {
    MaskScene scene = inference(MaskVariant::Reference, 8, 4);
    scene.spec.layer = LayerAttention::Sliding;
    scene.spec.slidingWindow = 4;
    const MaskLayout layout(scene);
    // Slot 0 sits at position 8 and sees (8-4, 8]: context 5..7; 4 is outside.
    QCOMPARE(layout.value(0, 5), int(kAllowed));
    QCOMPARE(layout.value(0, 4), int(kMasked));
    QCOMPARE(layout.describe(0, 4).a.reason, MaskReason::OutsideWindow);
    QCOMPARE(layout.value(0, 9 + 1), int(kMasked));  // sliding layers are causal in the block
  }

  void positionsPlusOneShiftsQueries() {
    const MaskLayout layout(inference(MaskVariant::PositionsPlusOne, 8, 4));
    QCOMPARE(layout.describe(2, 0).queryPosition, 8 + 2 + 1);
    QCOMPARE(layout.describe(2, 9 + 3).keyPosition, 8 + 3 + 1);
  }

  void trainingBlocksSeeOnlyThemselves() {
    MaskScene scene;
    scene.layout = MaskLayoutKind::Training;
    scene.spec.blockSize = 4;
    scene.sequenceLength = 20;
    scene.anchors = {3, 10};
    const MaskLayout layout(scene);
    QCOMPARE(layout.rows(), 8);
    QCOMPARE(layout.columns(), 20 + 8);
    QCOMPARE(layout.value(0, 2), int(kAllowed));   // block 0 (anchor 3) sees 0..2
    QCOMPARE(layout.value(0, 3), int(kMasked));
    QCOMPARE(layout.value(4, 9), int(kAllowed));   // block 1 (anchor 10) sees 0..9
    QCOMPARE(layout.value(0, 20 + 5), int(kMasked));  // not block 1's slots
    QCOMPARE(layout.describe(0, 25).a.reason, MaskReason::OtherBlock);
    QCOMPARE(layout.describe(5, 20 + 4).keyBlock, 1);
    QCOMPARE(layout.describe(5, 20 + 4).keyPosition, 10);
  }

  void badScenesAreRefused() {
    QVERIFY_THROWS_EXCEPTION(dfi::UsageError, (void)MaskLayout{inference(MaskVariant::Reference, -1, 4)});
    QVERIFY_THROWS_EXCEPTION(dfi::UsageError, (void)MaskLayout{inference(MaskVariant::Reference, 8, 0)});
    MaskScene training;
    training.layout = MaskLayoutKind::Training;
    training.sequenceLength = 10;
    training.anchors = {12};
    QVERIFY_THROWS_EXCEPTION(dfi::UsageError, (void)MaskLayout{training});
  }

  void evenlySpacedAnchorsStayInside() {
    const auto anchors = evenlySpacedAnchors(64, 16, 4);
    QCOMPARE(anchors, (std::vector<std::int64_t>{0, 16, 32, 48}));
    QCOMPARE(evenlySpacedAnchors(10, 16, 3), (std::vector<std::int64_t>{0}));
  }
};

QTEST_GUILESS_MAIN(TestMaskLayout)
#include "test_mask_layout.moc"
