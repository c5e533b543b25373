// The Data tab's page for a list of names: the count, the vocabulary and the longest name, the
// context (characters that predict the next one), whether case is kept, and the names as read.
#pragma once

#include "StudioKind.h"

#include <memory>

namespace Ui {
class NamesDataPage;
}

namespace il::app {

class NamesDataPage : public StudioPage {
    Q_OBJECT
public:
    explicit NamesDataPage(QWidget* parent = nullptr);
    ~NamesDataPage() override;

    void refresh() override;

private:
    void optionsEdited();

    std::unique_ptr<Ui::NamesDataPage> m_ui;
    bool m_updating = false;
};

} // namespace il::app
