// The bundled sample datasets: where they are, which there are, and what ":sample/NAME" means.
//
// The samples are plain files, not compiled into the programs: an installed program finds them
// in <prefix>/share/ironlearn/samples (the Debian packages put them in
// /usr/share/ironlearn/samples), and a program run from its build tree in the source tree's
// resources/samples. The first of these that exists is used:
//   1. $IRONLEARN_SAMPLES_DIR, when set (then only it: an explicit choice replaces the search);
//   2. <directory of the executable>/../share/ironlearn/samples (an installed program, also one
//      installed under another root with dpkg --root);
//   3. the Qt resource directory :/samples, where a program compiled them in (the GUI tests do);
//   4. the source tree's resources/samples (a program run from its build tree).
#pragma once

#include <QString>
#include <QStringList>

namespace il::io {

// The directory the samples are read from, or empty when none of the places above has them.
QString samplesDirectory();

// Why samplesDirectory() is empty, in one line naming the places looked in ("" when it is not).
QString samplesDirectoryProblem();

// The sample files' names (e.g. "iris.csv"), sorted; empty when there are none.
QStringList sampleFiles();

// The full path of the sample FILE ("iris.csv", or "iris" when one sample alone has that name
// before its suffix), or empty when there is no such sample.
QString samplePath(const QString& file);

// What a user or a saved setting names as a sample, turned into the file to read:
// ":sample/NAME" (the CLI's and the studio's command-line form) and ":/samples/NAME" (what
// earlier versions stored in recent files and settings) give samplePath(NAME), or empty when
// there is no such sample; anything else is returned as it is.
QString resolveSampleReference(const QString& path);

// True when PATH names a file in samplesDirectory() (or a sample reference as above).
bool isSamplePath(const QString& path);

} // namespace il::io
