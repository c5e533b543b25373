#include "ConceptHelp.h"

#include <QApplication>
#include <QCursor>
#include <QFile>
#include <QHelpEvent>
#include <QTextDocument>
#include <QToolTip>
#include <QVariant>
#include <QWidget>

namespace il::app {

namespace {

constexpr const char* kConceptProperty = "ironlearnConcept";

} // namespace

const QList<Concept>& concepts()
{
    static const QList<Concept> list{
        {"loss", "Loss"},
        {"validation", "Validation and overfitting"},
        {"cross-validation", "Cross-validation"},
        {"learning-rate", "Learning rate and schedules"},
        {"psnr", "PSNR and SSIM"},
        {"label-smoothing", "Label smoothing"},
        {"class-weights", "Class weights for rare classes"},
        {"temperature", "Temperature"},
        {"embeddings", "One-hot and embeddings"},
        {"hidden-units", "What a hidden unit computes"},
    };
    return list;
}

QString conceptTitle(const QString& id)
{
    for (const Concept& c : concepts())
        if (c.id == id) return c.title;
    return {};
}

QString conceptPage(const QString& id)
{
    if (conceptTitle(id).isEmpty()) return {};
    QFile file(":/help/" + id + ".html");
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(file.readAll());
}

ConceptLinks::ConceptLinks(QObject* parent) : QObject(parent) {}

void ConceptLinks::link(QWidget* control, const QString& id)
{
    Q_ASSERT(!conceptTitle(id).isEmpty());
    control->setProperty(kConceptProperty, id);
    control->installEventFilter(this);
}

QString ConceptLinks::conceptOf(const QWidget* control)
{
    for (const QWidget* w = control; w; w = w->parentWidget()) {
        const QString id = w->property(kConceptProperty).toString();
        if (!id.isEmpty()) return id;
        if (w->isWindow()) break;
    }
    return {};
}

QString ConceptLinks::conceptForHelpKey()
{
    const QString hovered = conceptOf(QApplication::widgetAt(QCursor::pos()));
    if (QToolTip::isVisible() && !hovered.isEmpty()) return hovered;
    const QString focused = conceptOf(QApplication::focusWidget());
    return focused.isEmpty() ? hovered : focused;
}

QString ConceptLinks::toolTipWithMore(const QWidget* control)
{
    const QString tip = control->toolTip();
    const QString more =
        "<i>(F1: more on " + conceptTitle(conceptOf(control)).toHtmlEscaped() + ")</i>";
    if (tip.isEmpty()) return more;
    return (Qt::mightBeRichText(tip) ? tip : "<p>" + tip.toHtmlEscaped() + "</p>") + "<p>" + more +
           "</p>";
}

bool ConceptLinks::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::ToolTip || !watched->isWidgetType())
        return QObject::eventFilter(watched, event);
    auto* control = static_cast<QWidget*>(watched);
    const auto* help = static_cast<QHelpEvent*>(event);
    QToolTip::showText(help->globalPos(), toolTipWithMore(control), control);
    return true;
}

} // namespace il::app
