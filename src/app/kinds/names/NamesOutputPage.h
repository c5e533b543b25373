// Output for names: sample new names at a temperature and see which are NEW (invented) or SEEN
// (in the training data) with the innovation rate; and the next-character inspector, whose bars
// reshape live as the prefix and the temperature change; Sweep… charts the innovation rate and
// the likelihood of the drawn names against the temperature (TemperatureSweepDialog).
#pragma once

#include "StudioKind.h"

#include <memory>
#include <vector>

namespace Ui {
class NamesOutputPage;
}

namespace il::tasks {
struct GenerationResult;
}

namespace il::app {

class Session;
class TemperatureSweepDialog;

class NamesOutputPage : public StudioPage {
    Q_OBJECT
public:
    explicit NamesOutputPage(QWidget* parent = nullptr);
    ~NamesOutputPage() override;

    double temperature() const;
    // The sweep's window, made on the first Sweep… (null before).
    TemperatureSweepDialog* sweepDialog() const { return m_sweep; }

protected:
    void connectSession(Session* session) override;

private:
    // Names from the network; with a prefix, names that start with it.
    void generate(const QString& prefix);
    void generated(const tasks::GenerationResult& result);
    void requestNextChar();
    void showSweep();
    void nextCharReady(const QString& prefix, double temperature, const std::vector<float>& probs,
                       const QStringList& symbols, const QString& error);

    std::unique_ptr<Ui::NamesOutputPage> m_ui;
    uint64_t m_generation = 0; // each Generate press samples new names
    QString m_prefix;          // the prefix of the names being generated ("" for none)
    TemperatureSweepDialog* m_sweep = nullptr;
};

} // namespace il::app
