// How the studio's panels write numbers, so a loss, a rate or a percentage reads the same
// everywhere (the locale's decimal point, the same digits):
//   losses and errors   4 significant digits         0.1235, 3114, 2.5e-05
//   learning rates      3 significant digits         0.002, 5e-05
//   percentages         1 decimal                    93.3%
//   scores in 0..1      3 decimals (SSIM, F1, R²)    0.912
//   decibels            2 decimals                   29.02 dB
// Not a number reads "–". (The task summaries, shared with the CLI, have their own formats.)
#pragma once

#include <QLocale>
#include <QString>

#include <cmath>

namespace il::app::fmt {

inline QString number(double v, char format, int precision)
{
    return std::isfinite(v) ? QLocale().toString(v, format, precision)
           : std::isnan(v)  ? QString::fromUtf8("\u2013")
                            : QString(v > 0 ? "∞" : "−∞");
}

inline QString loss(double v)
{
    return number(v, 'g', 4);
}
inline QString rate(double v)
{
    return number(v, 'g', 3);
}
inline QString percent(double fraction)
{
    return number(100 * fraction, 'f', 1) + "%";
}
inline QString score(double v)
{
    return number(v, 'f', 3);
}
inline QString decibels(double v)
{
    return number(v, 'f', 2) + " dB";
}

} // namespace il::app::fmt
