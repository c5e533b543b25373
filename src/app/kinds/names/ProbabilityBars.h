// Bars of the probability of each next character (the names inspector): one bar per vocabulary
// entry, the end-of-name symbol first, the most likely ones highlighted. Painted directly: a
// few dozen rectangles do not need a chart.
#pragma once

#include <QStringList>
#include <QWidget>

#include <vector>

namespace il::app {

class ProbabilityBars : public QWidget {
    Q_OBJECT
public:
    explicit ProbabilityBars(QWidget* parent = nullptr);

    void setProbabilities(const QStringList& symbols, const std::vector<float>& probs);
    void clear();
    const std::vector<float>& probabilities() const { return m_probs; }
    QSize sizeHint() const override { return {360, 160}; }
    QSize minimumSizeHint() const override { return {200, 110}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    int barAt(QPoint pos) const;

    QStringList m_symbols;
    std::vector<float> m_probs;
};

} // namespace il::app
