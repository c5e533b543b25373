// The image task's watch (ImageTask::watchSettings, TrainingWatch.h) on real pictures: a small
// black-and-white line drawing that SIREN at too high a learning rate cannot start on (the
// loss sits at the picture's variance: it paints the mean grey) is reported in one line, and
// the task recovers — earlier weights, a quarter of the rate, a fresh optimizer — to a sharp
// picture, the same bits every time; pictures that train well raise no alarm.
#include "ImageBytes.h"
#include "ImageTask.h"
#include "LineDrawing.h"
#include "Model.h"

#include <QFile>
#include <QTest>

#include <cmath>

using namespace il;
using namespace il::tasks;

namespace {

// A SIREN small enough for a test: on the 64x64 drawing at lr 0.03 it stalls at the mean from
// the first steps; at a quarter of that it learns the drawing in a few hundred steps.
const char* const kSiren = "dense:64,sine:30,dense:64,sine:30,dense:64,sine:30,dense";

std::shared_ptr<Task> openPicture(const QImage& image)
{
    const QByteArray bytes = testsupport::encodeImage(image);
    TaskOptions options;
    options.settings[kImageSizeSetting] = 64;
    QString error;
    std::shared_ptr<Task> task = openTask("picture.png", bytes, options, &error);
    if (!task) qWarning("%s", qPrintable(error));
    return task;
}

// The PSNR of painting every pixel the picture's mean: 10 log10(1 / variance).
double meanPsnr(const Task& task)
{
    const std::vector<float>& y = task.data().trainY;
    double sum = 0, squares = 0;
    for (float v : y) {
        sum += v;
        squares += static_cast<double>(v) * v;
    }
    const double n = static_cast<double>(y.size()), mean = sum / n;
    return 10 * std::log10(1 / (squares / n - mean * mean));
}

struct Run {
    TrainResult result;
    double psnr = NAN;
    std::vector<float> weights;
};

// steps of the task's defaults (Adam, cosine, full batch at 64x64) at lr, watched as told.
Run train(const std::shared_ptr<Task>& task, float lr, int64_t steps, const WatchSettings& watch,
          const QString& layers = kSiren)
{
    Model m;
    m.backend = createCpuBackend(1);
    task->applyDefaults(m.config);
    m.config.schedule.lrMax = lr;
    m.config.steps = steps;
    m.config.epochs = 0;
    m.task = task;
    m.build(layers.toStdString());
    m.upload();
    RunPolicy policy;
    policy.watch = watch;
    Trainer trainer(*m.network, *m.optimizer, m.config, m.state, policy);
    Run run;
    run.result = trainer.run(m.trainingData());
    run.psnr = task->trainingMetric(*m.network);
    run.weights = m.backend->toHost(m.network->parameters());
    return run;
}

QString lines(const TrainResult& r)
{
    QStringList all;
    for (const std::string& n : r.notices)
        all << QString::fromStdString(n);
    return all.join('\n');
}

} // namespace

class TestImageStall : public QObject {
    Q_OBJECT

private slots:
    void stallIsReported();
    void stallRecovers();
    void healthyPicturesRaiseNoAlarm_data();
    void healthyPicturesRaiseNoAlarm();
};

void TestImageStall::stallIsReported()
{
    const auto task = openPicture(testsupport::lineDrawing());
    QVERIFY(task);
    WatchSettings reportOnly = task->watchSettings();
    reportOnly.recoveries = 0;
    const Run stuck = train(task, 0.03f, 500, reportOnly);
    QCOMPARE(stuck.result.notices.size(), size_t(1));
    const QString line = lines(stuck.result);
    QCOMPARE(line, "step 300: the loss has stayed at the data's variance 0.111 for 200 steps: the "
                   "network predicts the mean; a learning rate lower than 0.03 may help");
    // Without a recovery it is still at the mean at the end: the drawing really stalls.
    QVERIFY2(stuck.psnr < meanPsnr(*task) + 3,
             qPrintable(QString("%1 dB, mean %2 dB").arg(stuck.psnr).arg(meanPsnr(*task))));
}

void TestImageStall::stallRecovers()
{
    const auto task = openPicture(testsupport::lineDrawing());
    QVERIFY(task);
    const WatchSettings watch = task->watchSettings();
    QVERIFY(watch.recoveries > 0);
    const Run recovered = train(task, 0.03f, 500, watch);
    const QString line = lines(recovered.result);
    QCOMPARE(line, "step 300: the loss has stayed at the data's variance 0.111 for 200 steps: the "
                   "network predicts the mean; recovering (1 of 3) from the weights of step 0 at "
                   "learning rate 0.0075");
    QCOMPARE(recovered.result.recoveries, 1);
    QCOMPARE(recovered.result.schedule.lrMax, 0.0075f);
    QVERIFY2(QString::fromStdString(recovered.result.message)
                 .endsWith("recovered 1 time from a stall or divergence; the learning rate is "
                           "now 0.0075"),
             recovered.result.message.c_str());
    // Sharp after 200 steps at the lower rate, where the stalled run stays at the mean.
    QVERIFY2(recovered.psnr > meanPsnr(*task) + 20,
             qPrintable(QString("%1 dB, mean %2 dB").arg(recovered.psnr).arg(meanPsnr(*task))));
    // The same seed gives the same run, recovery included.
    const Run again = train(task, 0.03f, 500, watch);
    QCOMPARE(again.weights, recovered.weights);
    QCOMPARE(again.result.notices, recovered.result.notices);
}

void TestImageStall::healthyPicturesRaiseNoAlarm_data()
{
    QTest::addColumn<QImage>("picture");
    QTest::addColumn<bool>("defaultPreset"); // or the small SIREN
    QImage camera(QString(IRONLEARN_SAMPLES) + "/camera.png");
    QTest::newRow("camera") << camera << false;
    QTest::newRow("camera, default preset") << camera << true;
    QImage gradient(64, 64, QImage::Format_RGB32);
    for (int y = 0; y < 64; ++y)
        for (int x = 0; x < 64; ++x)
            gradient.setPixel(x, y, qRgb(4 * x, 4 * y, 255 - 2 * (x + y)));
    QTest::newRow("smooth gradient") << gradient << false;
    // The drawing itself is not the problem: at the default rate it trains.
    QTest::newRow("line drawing at the default rate") << testsupport::lineDrawing() << false;
    QTest::newRow("line drawing, default preset") << testsupport::lineDrawing() << true;
}

void TestImageStall::healthyPicturesRaiseNoAlarm()
{
    QFETCH(QImage, picture);
    QFETCH(bool, defaultPreset);
    QVERIFY(!picture.isNull());
    const auto task = openPicture(picture);
    QVERIFY(task);
    TrainerConfig defaults;
    task->applyDefaults(defaults);
    // Long enough for a stall to be called (grace 100 + 200 steps).
    const QString layers = defaultPreset ? task->presetSpec(task->presets().first()) : kSiren;
    const Run run = train(task, defaults.schedule.lrMax, 400, task->watchSettings(), layers);
    QVERIFY2(run.result.notices.empty(), qPrintable(lines(run.result)));
    QVERIFY2(run.psnr > meanPsnr(*task) + 10, qPrintable(QString::number(run.psnr)));
}

QTEST_GUILESS_MAIN(TestImageStall)
#include "TestImageStall.moc"
