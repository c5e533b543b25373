// A note under a field of a form (why the GPU cannot be chosen, say): its words wrap at the
// width the form gives it, and it takes exactly the height they need, as a fixed height.
//
// It does not ask its layout for a height for its width, as a word-wrapped QLabel does: with
// such an item in it, Qt 6.4's QFormLayout lays out with stale sizes for rows hidden before they
// were first laid out, and the visible row above a hidden one collapses to no height (the
// Training panel lost its Learning rate row above the hidden grid tables' row that way).
#pragma once

#include <QLabel>

namespace il::app {

class FormNoteLabel : public QLabel {
    Q_OBJECT
public:
    explicit FormNoteLabel(QWidget* parent = nullptr);

    // Shows text (also as the tooltip) at the height it needs; hides the note when it is empty.
    void setNote(const QString& text);
    bool hasHeightForWidth() const override { return false; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void fitHeight();
};

} // namespace il::app
