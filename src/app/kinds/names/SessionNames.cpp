// The Session's requests that only names models answer: generated names, the temperature sweep
// and the next character's probabilities, each a job on the training worker (between two steps
// while training) answered by a signal on the GUI thread.
#include "Session.h"

namespace il::app {

void Session::generateNames(const tasks::GenerationOptions& options)
{
    m_worker->postAndReply(
        this,
        [options](ModelState& m) {
            tasks::GenerationResult result;
            const tasks::NamesSchema* schema = m.namesSchema();
            if (!m.network || !schema)
                result.error = "There is no names model yet: press Start to train one.";
            else
                result = tasks::generateNames(*m.network, *schema, options);
            return result;
        },
        [this](const tasks::GenerationResult& result) { emit namesGenerated(result); });
}

void Session::sweepTemperatures(const tasks::GenerationOptions& options,
                                const std::vector<double>& temperatures)
{
    struct Swept {
        std::vector<tasks::SweepPoint> points;
        QString error;
    };
    m_worker->postAndReply(
        this,
        [options, temperatures](ModelState& m) {
            Swept s;
            const tasks::NamesSchema* schema = m.namesSchema();
            if (!m.network || !schema)
                s.error = "There is no names model yet: press Start to train one.";
            else
                s.points =
                    tasks::temperatureSweep(*m.network, *schema, options, temperatures, &s.error);
            return s;
        },
        [this](const Swept& s) { emit temperatureSwept(s.points, s.error); });
}

void Session::requestNextChar(const QString& prefix, double temperature)
{
    m_nextCharWanted = std::make_pair(prefix, temperature);
    if (!m_nextCharBusy) sendNextChar();
}

void Session::sendNextChar()
{
    if (!m_nextCharWanted) return;
    const auto [prefix, temperature] = *m_nextCharWanted;
    m_nextCharWanted.reset();
    m_nextCharBusy = true;
    struct NextChar {
        std::vector<float> probs;
        QStringList symbols;
        QString error;
    };
    m_worker->postAndReply(
        this,
        [prefix, temperature](ModelState& m) {
            NextChar out;
            const tasks::NamesSchema* schema = m.namesSchema();
            if (!m.network || !schema) {
                out.error = "There is no names model yet.";
            } else {
                out.probs = tasks::nextCharProbabilities(*m.network, *schema, prefix, temperature,
                                                         &out.error);
                out.symbols = schema->vocabulary();
            }
            return out;
        },
        [this, prefix, temperature](const NextChar& out) {
            m_nextCharBusy = false;
            emit nextCharReady(prefix, temperature, out.probs, out.symbols, out.error);
            sendNextChar();
        });
}

} // namespace il::app
