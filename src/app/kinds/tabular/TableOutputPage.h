// Output for tables: the metrics in the file's units, a predictions table with ✓ / ✗ per row
// (classification) or the error (regression), a confusion matrix for classes and a
// predicted-versus-actual scatter for numbers; in a second tab the decision boundary over two
// features (BoundaryPanel).
#pragma once

#include "StudioKind.h"

#include <memory>

class QChart;

namespace Ui {
class TableOutputPage;
}

namespace il::app {

struct Evaluation;
class Session;

class TableOutputPage : public StudioPage {
    Q_OBJECT
public:
    explicit TableOutputPage(QWidget* parent = nullptr);
    ~TableOutputPage() override;

protected:
    void connectSession(Session* session) override;
    // The splitter resized (a smaller window, a restored geometry): the predictions keep the
    // width their columns need.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void evaluated(const Evaluation& evaluation);
    // Back to "Train the model…": no metrics, predictions, confusion matrix or scatter.
    void clear();
    void showConfusion(const Evaluation& evaluation);
    void showScatter(const Evaluation& evaluation);
    void fitPredictions();
    // The boundary tab usable only when the data has two numeric features (its tooltip says why).
    void updateBoundaryTab();
    void showBoundaryForTwoFeatures();

    std::unique_ptr<Ui::TableOutputPage> m_ui;
    QChart* m_scatter;
};

} // namespace il::app
