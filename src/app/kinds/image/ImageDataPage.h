// The Data tab's page for an image: the picture, its size and the size it trains at, the
// training size (longest side) and whether to train on its gray version.
#pragma once

#include "StudioKind.h"

#include <QPixmap>

#include <memory>

namespace Ui {
class ImageDataPage;
}

namespace il::app {

class ImageDataPage : public StudioPage {
    Q_OBJECT
public:
    explicit ImageDataPage(QWidget* parent = nullptr);
    ~ImageDataPage() override;

    void refresh() override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void optionsEdited();
    void fitImage();

    std::unique_ptr<Ui::ImageDataPage> m_ui;
    QPixmap m_pixmap;
    bool m_updating = false;
};

} // namespace il::app
