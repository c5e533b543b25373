#include "HelpDialogs.h"

#include "ConceptHelp.h"

#include <QAction>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QTableWidget>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include <functional>

namespace il::app {

namespace {

QString plainText(QString text)
{
    text.remove(QRegularExpression("&(?!&)"));
    text.remove(QChar(0x2026)); // "…"
    return text.trimmed();
}

// Keys that belong to no action: Qt's own and the image views'.
struct FixedKey {
    const char* section;
    const char* what;
    const char* keys;
};
const FixedKey kFixedKeys[] = {
    {"Anywhere", "Move to the next or previous control", "Tab, Shift+Tab"},
    {"Anywhere", "Open a menu", "Alt+the underlined letter"},
    {"Anywhere", "Close a dialog or the welcome page", "Esc"},
    {"Anywhere", "Next or previous page of a group of tabs (with a tab in focus)", "Left, Right"},
    {"Image views", "Zoom in, zoom out, fit the picture", "+, \u2212, 0"},
    {"Image views", "Move around a zoomed picture", "Arrow keys"},
};

} // namespace

ConceptsDialog::ConceptsDialog(QWidget* parent)
    : QDialog(parent), m_topics(new QListWidget), m_page(new QTextBrowser)
{
    setObjectName("conceptsDialog");
    setWindowTitle("Concepts");
    m_topics->setObjectName("conceptsListWidget");
    m_page->setObjectName("conceptTextBrowser");
    // "See also" links name another concept's id; anything else is a web address.
    m_page->setOpenLinks(false);
    connect(m_page, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme().isEmpty() && !conceptTitle(url.path()).isEmpty())
            showConcept(url.path());
        else
            QDesktopServices::openUrl(url);
    });
    for (const Concept& c : concepts()) {
        auto* item = new QListWidgetItem(c.title, m_topics);
        item->setData(Qt::UserRole, c.id);
    }
    m_topics->setMaximumWidth(m_topics->sizeHintForColumn(0) + 24);
    connect(m_topics, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0) m_page->setHtml(conceptPage(concepts().value(row).id));
    });
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    auto* row = new QHBoxLayout;
    row->addWidget(m_topics);
    row->addWidget(m_page, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(row, 1);
    layout->addWidget(buttons);
    resize(720, 460);
    m_topics->setCurrentRow(0);
}

void ConceptsDialog::showConcept(const QString& id)
{
    for (int i = 0; i < concepts().size(); ++i)
        if (concepts()[i].id == id) m_topics->setCurrentRow(i);
}

QString ConceptsDialog::currentConcept() const
{
    return concepts().value(m_topics->currentRow()).id;
}

ShortcutsDialog::ShortcutsDialog(QWidget* window)
    : QDialog(window), m_window(window), m_table(new QTableWidget(0, 3))
{
    setObjectName("shortcutsDialog");
    setWindowTitle("Keyboard Shortcuts");
    m_table->setObjectName("shortcutsTableWidget");
    m_table->setHorizontalHeaderLabels({"Where", "What", "Keys"});
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_table->setShowGrid(false);
    m_table->setAlternatingRowColors(true);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_table, 1);
    layout->addWidget(buttons);
    resize(640, 520);
    refresh();
}

void ShortcutsDialog::refresh()
{
    struct Row {
        QString section, what, keys;
    };
    QList<Row> rows;
    // Every action of every menu (and submenu) that has a shortcut, in menu order.
    std::function<void(QMenu*, const QString&)> walk = [&](QMenu* menu, const QString& section) {
        for (QAction* a : menu->actions()) {
            if (a->menu()) {
                walk(a->menu(), section + " > " + plainText(a->menu()->title()));
                continue;
            }
            QStringList keys;
            for (const QKeySequence& k : a->shortcuts())
                keys << k.toString(QKeySequence::NativeText);
            if (!keys.isEmpty()) rows.append({section, plainText(a->text()), keys.join(", ")});
        }
    };
    if (auto* main = qobject_cast<QMainWindow*>(m_window))
        for (QAction* a : main->menuBar()->actions())
            if (a->menu()) walk(a->menu(), plainText(a->menu()->title()));
    for (const FixedKey& k : kFixedKeys)
        rows.append({k.section, k.what, k.keys});

    m_table->setRowCount(static_cast<int>(rows.size()));
    for (int i = 0; i < rows.size(); ++i) {
        m_table->setItem(i, 0, new QTableWidgetItem(rows[i].section));
        m_table->setItem(i, 1, new QTableWidgetItem(rows[i].what));
        m_table->setItem(i, 2, new QTableWidgetItem(rows[i].keys));
    }
    m_table->resizeColumnToContents(0);
    m_table->resizeColumnToContents(2);
}

} // namespace il::app
