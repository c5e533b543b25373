// Counts as people read them, in the CLI and the studio alike: "1 feature", "2 features",
// "1 class", "3 classes", "1 entry", "2 entries".
#pragma once

#include <QLocale>
#include <QString>

namespace il::tasks {

// The English plural of a countable noun, for the nouns the studio counts (no irregular ones).
inline QString pluralOf(const QString& word)
{
    if (word.endsWith('s') || word.endsWith('x') || word.endsWith("ch") || word.endsWith("sh"))
        return word + "es";
    if (word.size() > 1 && word.endsWith('y') && !QString("aeiou").contains(word[word.size() - 2]))
        return word.chopped(1) + "ies";
    return word + 's';
}

// "n word(s)", the number as `locale` writes it (the C locale: no group separators).
inline QString countOf(qint64 n, const QString& word, const QLocale& locale = QLocale::c())
{
    return locale.toString(n) + ' ' + (n == 1 || n == -1 ? word : pluralOf(word));
}

} // namespace il::tasks
