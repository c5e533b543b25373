// The Session's output requests: each one is a job on the training worker (between two steps
// while training, so it sees one consistent set of weights), answered by a signal on the GUI
// thread.
#include "Session.h"

namespace il::app {

namespace {

constexpr int kPredictionRows = 1000;

Evaluation evaluateModel(ModelState& m)
{
    Evaluation ev;
    if (!m.network || !m.task) return ev;
    const tasks::TaskMetrics metrics = m.task->evaluate(*m.network);
    ev.summary = metrics.summary;
    ev.values = metrics.values;
    tasks::Predictions predictions = m.task->predictions(*m.network, kPredictionRows);
    ev.classification = predictions.classification;
    ev.where = predictions.where;
    ev.rows = std::move(predictions.rows);
    return ev;
}

} // namespace

// ---- outputs --------------------------------------------------------------------------------

void Session::render(QSize size)
{
    m_worker->postAndReply(
        this,
        [size](ModelState& m) {
            std::pair<QImage, QString> out; // the image, or why there is none
            if (!m.network)
                out.second = "There is no model yet: press Start to train one.";
            else if (const auto* task = m.imageTask())
                out.first = task->render(*m.network, size, &out.second);
            else if (const auto* geometry = m.imageGeometry())
                out.first = tasks::renderImage(*m.network, *geometry, size, &out.second);
            else
                out.second = "Only image models render pictures.";
            return out;
        },
        [this](const std::pair<QImage, QString>& out) { emit renderReady(out.first, out.second); });
}

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

void Session::evaluate()
{
    if (!m_task) return;
    m_worker->postAndReply(
        this,
        [](ModelState& m) {
            std::optional<Evaluation> ev;
            if (m.network && m.task) ev = evaluateModel(m);
            return ev;
        },
        [this, weights = m_weightsGeneration,
         number = ++m_evaluations](const std::optional<Evaluation>& ev) {
            if (!ev || weights != m_weightsGeneration) return;
            makeVerdict(number, *ev); // before the output page shows the evaluation
            emit evaluated(*ev);
        });
}

} // namespace il::app
