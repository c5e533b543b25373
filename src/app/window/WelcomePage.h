// The welcome page (forms/WelcomePage.ui): three guided starts (a table, an image, names), each
// a large button naming the bundled sample it opens, "Open your own file…" and "Go to the
// studio" (Esc). It only asks: StudioHelp opens the sample and shows its hint.
#pragma once

#include <QWidget>

#include <memory>

namespace Ui {
class WelcomePage;
}

namespace il::app {

class WelcomePage : public QWidget {
    Q_OBJECT
public:
    explicit WelcomePage(QWidget* parent = nullptr);
    ~WelcomePage() override;

    // The sample a guided start opens, by its base name ("iris", "camera", "names-ssa2018").
    struct GuidedStart {
        const char* button; // the button's object name
        const char* sample;
    };
    static const GuidedStart kStarts[3];

signals:
    void sampleChosen(const QString& sample);
    void openFileRequested();
    void closeRequested();

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    std::unique_ptr<Ui::WelcomePage> m_ui;
};

} // namespace il::app
