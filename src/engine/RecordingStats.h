// How the training steps' recordings (CUDA graphs, TrainingStep.cpp) went in this process: how
// many were made, and how many times one could not be made (a failed capture, a workspace that
// had to grow) so that the steps ran op by op instead. Falling back is correct but slower, and
// otherwise silent: testCudaParity, ironlearn-bench's JSON and the device check report it, and
// the device check requires no fallback.
#pragma once

#include <cstdint>
#include <string>

namespace il {

struct RecordingStats {
    int64_t recorded = 0;    // recordings made (one per batch row count per run)
    int64_t fellBack = 0;    // recordings that failed; the run went on without recording
    std::string lastFailure; // the error of the last one that failed
};

// A snapshot, safe from any thread.
RecordingStats recordingStats();

} // namespace il
