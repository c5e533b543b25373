// The image output page and what it offers, driven through the real MainWindow offscreen: the
// original and the reconstruction zoom in from the first wheel notch or + / = in every state
// (fitted, after a render, after another training size), and a render at another resolution
// while zoomed shows the picture at the same place on screen; File > Export Model offers only
// the exports that would take the current model (the hash grid's ONNX included), and says why
// the others would not.
#include "ImageView.h"
#include "ModelExporter.h"
#include "StudioTestCase.h"

#include <QAction>
#include <QComboBox>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <cmath>

using namespace il::app;
using namespace studiotest;

namespace {

// The width the picture takes on screen, in pixels.
double shownWidth(const ImageView* view)
{
    return view->transform().m11() * view->image().width();
}

// One notch of a mouse wheel (angle 120, 1/8 degree units) over the middle of the view.
void wheel(ImageView* view, int notches = 1)
{
    QWidget* port = view->viewport();
    const QPointF at = QRectF(port->rect()).center();
    QWheelEvent event(at, port->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(port, &event);
}

// The share of the viewport's pixels that are dark (all channels under 40).
double darkShare(const QImage& shot)
{
    const QImage rgb = shot.convertToFormat(QImage::Format_RGB32);
    qint64 dark = 0;
    for (int y = 0; y < rgb.height(); ++y)
        for (int x = 0; x < rgb.width(); ++x) {
            const QRgb p = rgb.pixel(x, y);
            dark += qRed(p) < 40 && qGreen(p) < 40 && qBlue(p) < 40;
        }
    return double(dark) / (qint64(rgb.width()) * rgb.height());
}

// Mean absolute difference of the grey levels of two shots of the same size, 0 to 255.
double meanDifference(const QImage& a, const QImage& b)
{
    const QImage ga = a.convertToFormat(QImage::Format_Grayscale8);
    const QImage gb = b.convertToFormat(QImage::Format_Grayscale8);
    if (ga.size() != gb.size()) return 255;
    double sum = 0;
    for (int y = 0; y < ga.height(); ++y)
        for (int x = 0; x < ga.width(); ++x)
            sum += std::abs(qGray(ga.pixel(x, y)) - qGray(gb.pixel(x, y)));
    return sum / (double(ga.width()) * ga.height());
}

} // namespace

class TestStudioImages : public StudioWindowTestCase {
    Q_OBJECT

private slots:

    void zoomInWorksFromTheFirstNotchOrKey();
    void renderWhileZoomedKeepsThePictureInPlace();
    void exportOffersOnlyWhatItCanTake();

private:
    ImageView* original() const { return find<ImageView>("originalImageView"); }
    ImageView* reconstruction() const { return find<ImageView>("reconstructionImageView"); }
    // Renders at the resolution chooser's entry `index` and waits for the picture.
    void render(int index, QSize expected);
    // Checks that one wheel notch and one + (and =) over `view` each zoom both views in.
    void checkZoomsIn(ImageView* view, const char* state);
};

void TestStudioImages::render(int index, QSize expected)
{
    find<QComboBox>("resolutionComboBox")->setCurrentIndex(index);
    find<QPushButton>("renderButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(reconstruction()->image().size(), expected, kTrainingWait);
    QTRY_VERIFY(find<QPushButton>("renderButton")->isEnabled());
}

void TestStudioImages::checkZoomsIn(ImageView* view, const char* state)
{
    ImageView* other = view == original() ? reconstruction() : original();
    for (int way = 0; way < 3; ++way) {
        QTest::keyClick(view, Qt::Key_0); // fitted, as a new picture is
        QCoreApplication::processEvents();
        const double before = shownWidth(view), otherBefore = shownWidth(other);
        if (way == 0)
            wheel(view);
        else
            QTest::keyClick(view, way == 1 ? Qt::Key_Plus : Qt::Key_Equal);
        QCoreApplication::processEvents();
        const double factor = way == 0 ? std::pow(1.0015, 120) : 1.25;
        const QString what = QString("%1, %2 over %3: %4 -> %5 px")
                                 .arg(state,
                                      way == 0   ? "wheel"
                                      : way == 1 ? "+"
                                                 : "=",
                                      view->objectName())
                                 .arg(before)
                                 .arg(shownWidth(view));
        QVERIFY2(std::abs(shownWidth(view) / before - factor) < 1e-6, qPrintable(what));
        // The linked view zoomed with it (a view without a picture has nothing to zoom).
        if (!other->image().isNull())
            QVERIFY2(
                std::abs(shownWidth(other) / otherBefore - factor) < 1e-6,
                qPrintable(
                    what +
                    QString(", %1 -> %2 px beside it").arg(otherBefore).arg(shownWidth(other))));
    }
}

// Zoom in did nothing while the views were fitted: the zoomed view's link made the other view
// take the new zoom while it still counted as fitted, its scroll bars appeared, it fitted itself
// again, and the zoomed view followed it back.
void TestStudioImages::zoomInWorksFromTheFirstNotchOrKey()
{
    openSmallImage();
    train(20);
    QTRY_VERIFY(!reconstruction()->image().isNull());
    reconstruction()->setFocus();
    checkZoomsIn(reconstruction(), "fitted");
    checkZoomsIn(original(), "fitted");
    if (QTest::currentTestFailed()) return;

    render(0, QSize(200, 200)); // another size than the snapshots
    checkZoomsIn(reconstruction(), "after a render");
    checkZoomsIn(original(), "after a render");
    if (QTest::currentTestFailed()) return;

    // Zoomed in, then a render at another resolution: zooming goes on from there.
    wheel(reconstruction(), 2);
    const double zoomed = shownWidth(reconstruction());
    render(1, QSize(512, 512));
    wheel(reconstruction());
    QVERIFY2(shownWidth(reconstruction()) > zoomed * 1.1,
             qPrintable(QString("%1 -> %2 px").arg(zoomed).arg(shownWidth(reconstruction()))));

    // Another training size: the pictures are replaced, and zoom in works on the new ones.
    setTrainingSize(48);
    train(10);
    QTRY_COMPARE(reconstruction()->image().size(), QSize(48, 48));
    checkZoomsIn(reconstruction(), "after another training size");
    checkZoomsIn(original(), "after another training size");
}

// A render at another resolution while zoomed kept the view's zoom in scene pixels, so a
// 2048 px picture was shown magnified by the render's ratio, its top-left corner filling the
// view. The picture stays where it was on screen, at the size it had.
void TestStudioImages::renderWhileZoomedKeepsThePictureInPlace()
{
    openSmallImage();
    train(40);
    QTRY_VERIFY(!reconstruction()->image().isNull());
    ImageView* view = reconstruction();
    const double fitted = shownWidth(view);
    wheel(view, -1); // (out first: zooming in from fitted did nothing before)
    wheel(view, 4);
    QCoreApplication::processEvents();
    const double width = shownWidth(view);
    QVERIFY2(width > fitted * 1.5, qPrintable(QString("%1 -> %2 px").arg(fitted).arg(width)));
    const QImage before = view->viewport()->grab().toImage();
    const QImage originalBefore = original()->viewport()->grab().toImage();
    const double darkBefore = darkShare(before);

    render(3, QSize(2048, 2048));
    QCoreApplication::processEvents();
    QVERIFY2(
        std::abs(shownWidth(view) / width - 1) < 0.01,
        qPrintable(QString("shown %1 px wide before, %2 after").arg(width).arg(shownWidth(view))));
    const QImage after = view->viewport()->grab().toImage();
    const double dark = darkShare(after);
    QVERIFY2(dark < darkBefore + 0.15,
             qPrintable(QString("dark share %1 before, %2 after").arg(darkBefore).arg(dark)));
    // The same part of the picture (a sharper render of it): close to the shot before.
    const double moved = meanDifference(before, after);
    QVERIFY2(moved < 25, qPrintable(QString("mean grey difference %1").arg(moved)));
    // The original beside it did not move either.
    QVERIFY(meanDifference(originalBefore, original()->viewport()->grab().toImage()) < 5);

    // Zoom out and in again around the render, then back to the training size's snapshots.
    wheel(view, -1);
    wheel(view, 1);
    QVERIFY(std::abs(shownWidth(view) / width - 1) < 0.01);
}

// ONNX was offered for the default image model (the hash grid) and refused only after the save
// question and the file dialog. The hash grid now exports to ONNX (its xor in opset 17
// arithmetic, testCliOnnx runs it in ONNX Runtime against the engine), so the studio writes the
// file; and each export action is enabled exactly when the export's own check (refusal) takes
// the model, that check's reason on it otherwise.
void TestStudioImages::exportOffersOnlyWhatItCanTake()
{
    auto* onnx = find<QAction>("actionExportOnnx");
    auto* pytorch = find<QAction>("actionExportPyTorch");
    auto* exporter = m_window->findChild<ModelExporter*>();
    QVERIFY(exporter);
    const auto offered = [&] {
        for (auto [action, format] : {std::pair{onnx, ModelExporter::Format::Onnx},
                                      std::pair{pytorch, ModelExporter::Format::PyTorch}}) {
            const QString why = exporter->refusal(format);
            QCOMPARE(action->isEnabled(), why.isEmpty());
            if (!why.isEmpty()) QCOMPARE(action->toolTip(), why);
            QCOMPARE(action->statusTip(), why);
        }
    };
    openSample("camera");
    setTrainingSize(32);
    QVERIFY(session()->spec().startsWith("hashgrid"));
    offered();
    QVERIFY(onnx->isEnabled());
    QVERIFY(pytorch->isEnabled());
    QVERIFY(exporter->refusal(ModelExporter::Format::Onnx).isEmpty());

    // File > Export Model > To ONNX on the untrained hash grid: saved first, then written.
    QTemporaryDir dir;
    const QString model = dir.filePath("camera.safetensors"), graph = dir.filePath("camera.onnx");
    QSignalSpy exported(exporter, &ModelExporter::exported);
    QSignalSpy failed(exporter, &ModelExporter::failed);
    QSignalSpy saved(session(), &Session::modelSaved);
    il::app::Dialogs::setNextAnswer(QMessageBox::Save); // "Save it first?"
    il::app::Dialogs::setNextFileName(model);           // Save As
    onnx->trigger();
    il::app::Dialogs::setNextFileName(graph); // where the graph goes, asked once it is saved
    QTRY_COMPARE(saved.count(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(exported.count() + failed.count() == 1, kTrainingWait);
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
    QVERIFY(QFileInfo(graph).size() > 0);
    offered();

    // Another stack, and a table: what the actions offer follows the check.
    auto* spec = find<QLineEdit>("specLineEdit");
    spec->setText(kSmallImageSpec);
    emit spec->returnPressed();
    QCOMPARE(session()->spec(), kSmallImageSpec);
    offered();
    openSample("iris");
    offered();
    QVERIFY(onnx->isEnabled() && pytorch->isEnabled());
}

QTEST_MAIN(TestStudioImages)
#include "TestStudioImages.moc"
