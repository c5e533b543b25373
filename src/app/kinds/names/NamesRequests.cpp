// The requests that only names models answer: generated names, the temperature sweep
// and the next character's probabilities, each a job on the training worker (between two steps
// while training) answered by a signal on the GUI thread.
#include "NamesRequests.h"

#include "NamesModelState.h"

namespace il::app {

void NamesRequests::generateNames(const tasks::GenerationOptions& options)
{
    m_session.ask(
        this,
        [options](ModelState& m) {
            tasks::GenerationResult result;
            const tasks::NamesSchema* schema = namesSchemaOf(m);
            if (!m.network || !schema)
                result.error = "There is no names model yet: press Start to train one.";
            else
                result = tasks::generateNames(*m.network, *schema, options);
            return result;
        },
        [this](const tasks::GenerationResult& result) { emit namesGenerated(result); });
}

void NamesRequests::sweepTemperatures(const tasks::GenerationOptions& options,
                                      const std::vector<double>& temperatures)
{
    struct Swept {
        std::vector<tasks::SweepPoint> points;
        QString error;
    };
    m_session.ask(
        this,
        [options, temperatures](ModelState& m) {
            Swept s;
            const tasks::NamesSchema* schema = namesSchemaOf(m);
            if (!m.network || !schema)
                s.error = "There is no names model yet: press Start to train one.";
            else
                s.points =
                    tasks::temperatureSweep(*m.network, *schema, options, temperatures, &s.error);
            return s;
        },
        [this](const Swept& s) { emit temperatureSwept(s.points, s.error); });
}

void NamesRequests::requestNextChar(const QString& prefix, double temperature)
{
    m_nextChar.want({prefix, temperature},
                    [this](const std::pair<QString, double>& r) { sendNextChar(r); });
}

void NamesRequests::sendNextChar(const std::pair<QString, double>& request)
{
    const auto [prefix, temperature] = request;
    struct NextChar {
        std::vector<float> probs;
        QStringList symbols;
        QString error;
    };
    m_session.ask(
        this,
        [prefix, temperature](ModelState& m) {
            NextChar out;
            const tasks::NamesSchema* schema = namesSchemaOf(m);
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
            emit nextCharReady(prefix, temperature, out.probs, out.symbols, out.error);
            m_nextChar.answered([this](const std::pair<QString, double>& r) { sendNextChar(r); });
        });
}

} // namespace il::app
