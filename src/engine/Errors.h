// Typed exceptions thrown by the engine. Each carries a complete, one-line message
// that a user can act on; callers (io, tasks, the CLI, the GUI worker) catch and show it.
#pragma once

#include <stdexcept>
#include <string>

namespace il {

// A bad argument or configuration: wrong shape, unknown layer, a spec that does not fit.
class EngineError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A shape mismatch between tensors handed to a layer or an op.
class ShapeError : public EngineError {
public:
    using EngineError::EngineError;
};

// A backend failure (out of memory, a kernel that failed, a device that went away).
class BackendError : public EngineError {
public:
    using EngineError::EngineError;
};

} // namespace il
