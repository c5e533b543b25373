// Two runs side by side: every setting of each, the ones that differ highlighted (and named at
// the top), their results, their loss curves on one chart, and their outputs (the
// reconstructions of an image, sample names). It shows copies of the two Run records, so it
// stays right while the session trains on or the run list changes.
#pragma once

#include "RunList.h"

#include <QDialog>

#include <memory>

class QTableWidget;

namespace Ui {
class RunCompareDialog;
}

namespace il::app {

struct RowPair;

class RunCompareDialog : public QDialog {
    Q_OBJECT
public:
    RunCompareDialog(const Run& a, const Run& b, QWidget* parent = nullptr);
    ~RunCompareDialog() override;

    // Tests: the labels of the settings rows that differ (highlighted), and a result's text for
    // each run ("" when the row is missing).
    QStringList differingSettings() const;
    std::pair<QString, QString> result(const QString& label) const;

private:
    void fillTable(QTableWidget* table, const std::vector<RowPair>& rows, bool highlight);
    void drawCurves();
    void showOutputs();
    void showOnlyDifferences(bool only);

    std::unique_ptr<Ui::RunCompareDialog> m_ui;
    Run m_a, m_b;
};

} // namespace il::app
