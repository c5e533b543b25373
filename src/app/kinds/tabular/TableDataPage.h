// The Data tab's page for a table: the task the column roles make (classification into which
// classes, or regression), a role per column (feature, target, ignore), what to do with missing
// cells when the table has some, and the first rows as read.
#pragma once

#include "StudioKind.h"

#include <memory>

namespace Ui {
class TableDataPage;
}

namespace il::app {

class CsvPreviewModel;

class TableDataPage : public StudioPage {
    Q_OBJECT
public:
    explicit TableDataPage(QWidget* parent = nullptr);
    ~TableDataPage() override;

    void refresh() override;

private:
    void showMissing();
    void missingEdited();
    void rolesEdited();

    std::unique_ptr<Ui::TableDataPage> m_ui;
    CsvPreviewModel* m_preview;
    bool m_updating = false;
};

} // namespace il::app
