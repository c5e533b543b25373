// What the CLI's image tests share: the small picture they train on, and the file and message
// checks around it (needs Qt Gui; CliRunner.h is for every CLI test).
#pragma once

#include "CliRunner.h"

#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QtEndian>

#include <cmath>
#include <initializer_list>
#include <utility>

namespace clitest {

// 48 x 32 RGB: two gradients and a wave, smooth enough to learn in a second.
inline QImage gradientPicture()
{
    QImage picture(48, 32, QImage::Format_RGB32);
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 48; ++x)
            picture.setPixel(x, y,
                             qRgb(x * 5, y * 7, static_cast<int>(128 + 100 * std::sin(x * 0.4))));
    return picture;
}

// The model file at from with keys of its saved task set to values, written to to: a model that
// claims another picture size. The header's length changes; the tensors' offsets count from
// the data, so they stay right.
inline bool withTaskValue(const QString& from, const QString& to,
                          std::initializer_list<std::pair<const char*, int>> values)
{
    QFile in(from);
    if (!in.open(QIODevice::ReadOnly)) return false;
    const QByteArray raw = in.readAll();
    const auto n = static_cast<qsizetype>(qFromLittleEndian<quint64>(raw.constData()));
    QJsonObject header = QJsonDocument::fromJson(raw.mid(8, n)).object();
    QJsonObject meta = header["__metadata__"].toObject();
    QJsonObject task = QJsonDocument::fromJson(meta["task"].toString().toUtf8()).object();
    for (const auto& [key, value] : values)
        task[QLatin1String(key)] = value;
    meta["task"] = QString::fromUtf8(QJsonDocument(task).toJson(QJsonDocument::Compact));
    header["__metadata__"] = meta;
    QByteArray h = QJsonDocument(header).toJson(QJsonDocument::Compact);
    h += QByteArray((8 - h.size() % 8) % 8, ' ');
    QByteArray length(8, 0);
    qToLittleEndian<quint64>(static_cast<quint64>(h.size()), length.data());
    return writeBytes(to, length + h + raw.mid(8 + n));
}

} // namespace clitest
