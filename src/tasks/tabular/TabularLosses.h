// Comparing two models of a table row by row: each row's loss as the trainer defines it, and the
// mean difference of two models' losses with its standard error. The wide-and-deep default uses
// them to judge its trained network against its linear start (Task::settle).
#pragma once

#include "NetworkAverage.h"
#include "TabularBaselines.h"
#include "TabularTask.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace il::tasks {

// Each row's loss as the trainer measures it (without label smoothing), from the network's raw
// outputs (or a LinearMap's) rows x outputWidth and y as TabularSplit holds it: regression the
// squared error averaged over the targets (normalised), a binary target the logistic loss of its
// one logit, several classes the softmax cross-entropy; times the row's class weight when
// classWeights holds one per class (two for a binary target), as a class-weighted run's loss.
std::vector<double> tabularRowLosses(const TabularSchema& schema, const std::vector<float>& outputs,
                                     const std::vector<float>& y, int64_t rows,
                                     const std::vector<float>& classWeights);

// Two models' losses on the same rows, compared row by row: the means, and the mean of the
// differences (a - b) with its standard error (the rows' spread of a - b over sqrt(rows)).
struct PairedLosses {
    double meanA = NAN, meanB = NAN, meanDiff = NAN, stdError = NAN;
    int64_t rows = 0;
};
PairedLosses comparePaired(const std::vector<double>& a, const std::vector<double>& b);

// Each output's error, prediction less target, row by row: what the folds' blend with least
// squares is fitted on (Task::rowErrors). Empty when the sizes differ.
std::vector<double> tabularErrors(const std::vector<float>& outputs, const std::vector<float>& y);

// A baseline as the network's own linear map (outputs x inputs weights, LinearPart), for a network
// of these widths; false when it is not fitted or does not fit them.
bool linearPartOf(const LinearMap& linear, int64_t inputs, int64_t outputs, LinearPart& out);

} // namespace il::tasks
