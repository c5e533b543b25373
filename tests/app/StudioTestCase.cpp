#include "StudioTestCase.h"

#include <cctype>

namespace studiotest {

void StudioWindowTestCase::initTestCase()
{
    QByteArray name = metaObject()->className();
    name = name.mid(name.lastIndexOf(':') + 1); // without a namespace
    if (!name.isEmpty()) name[0] = static_cast<char>(std::tolower(uchar(name[0])));
    isolateSettings(name.constData());
}

} // namespace studiotest
