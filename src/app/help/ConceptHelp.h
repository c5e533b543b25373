// Help > Concepts: the short pages on the ideas behind the controls (loss, validation, learning
// rate, PSNR, label smoothing, class weights, temperature, embeddings), and the links from
// controls to them.
// The pages are Qt resources (resources/help/<id>.html, under :/help/). A linked control's
// tooltip ends with "(F1: more on <title>)", and F1 (Help > Help on This Control) opens that
// page for the control under the mouse while its tooltip shows, else for the focused control.
#pragma once

#include <QList>
#include <QObject>
#include <QString>

class QWidget;

namespace il::app {

struct Concept {
    QString id;    // the page is :/help/<id>.html
    QString title; // as the topic list and the tooltips say it
};

// Every concept, in the order Help > Concepts lists them.
const QList<Concept>& concepts();
// The title of concept id ("" when there is no such concept).
QString conceptTitle(const QString& id);
// The page of concept id as HTML ("" when there is no such concept or page).
QString conceptPage(const QString& id);

// Ties controls to concept pages. It filters the linked controls' tooltip events (a tooltip set
// later, by the panel's own code, still gets its "F1: more" line) and answers which concept
// F1 means now.
class ConceptLinks : public QObject {
    Q_OBJECT
public:
    explicit ConceptLinks(QObject* parent = nullptr);

    // control's tooltip leads to concept id from now on. control is not owned.
    void link(QWidget* control, const QString& id);
    // The concept a control (or the nearest linked widget above it) leads to; "" when none.
    static QString conceptOf(const QWidget* control);
    // The concept F1 opens now: the control under the mouse while a tooltip shows, else the
    // focused control, else the control under the mouse; "" when none is linked.
    static QString conceptForHelpKey();
    // control's tooltip text with the "F1: more" line, as rich text.
    static QString toolTipWithMore(const QWidget* control);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
};

} // namespace il::app
