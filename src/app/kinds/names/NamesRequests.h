// The requests only names models answer (NamesRequests.cpp): generated names, the temperature
// sweep and the next character's probabilities.
#pragma once

#include "LatestRequest.h"
#include "NamesTask.h"
#include "Session.h"

#include <QObject>
#include <QStringList>

#include <utility>
#include <vector>

namespace il::app {

class NamesRequests : public QObject {
    Q_OBJECT
public:
    explicit NamesRequests(Session* session) : QObject(session), m_session(*session) {}
    // The session's (Session::part).
    static NamesRequests& of(Session& session) { return session.part<NamesRequests>(); }

    // Each is a job on the training worker (between two steps while training) answered by the
    // signal below it.
    void generateNames(const tasks::GenerationOptions& options);
    // Names drawn at each temperature (tasks::temperatureSweep).
    void sweepTemperatures(const tasks::GenerationOptions& options,
                           const std::vector<double>& temperatures);
    // One request in flight, the latest one waiting (the inspector follows typing).
    void requestNextChar(const QString& prefix, double temperature);

signals:
    void namesGenerated(const il::tasks::GenerationResult& result);
    void temperatureSwept(const std::vector<il::tasks::SweepPoint>& points, const QString& error);
    void nextCharReady(const QString& prefix, double temperature, const std::vector<float>& probs,
                       const QStringList& symbols, const QString& error);

private:
    void sendNextChar(const std::pair<QString, double>& request);

    Session& m_session;
    LatestRequest<std::pair<QString, double>> m_nextChar;
};

} // namespace il::app
