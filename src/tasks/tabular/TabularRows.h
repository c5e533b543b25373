// Rows of a table's splits: picking them, keeping a JSON file's test rows, a preview's first
// rows, and the folds of cross-validation. Internal to the tabular task.
#pragma once

#include "CsvTable.h"
#include "TabularTask.h"

#include <vector>

namespace il::tasks::tabular {

// Keeps the rows of a split whose table row is at least `first` (a JSON file's test rows).
TabularSplit rowsFrom(const TabularSplit& in, int64_t first, size_t xWidth, size_t yWidth);

// The first rows of a table, with the whole table's column counts and line jumps (so lineOf
// answers for every row of the table).
io::CsvTable headOf(io::CsvTable table, int64_t rows);

// The rows of split at positions `rows` (x from xs, the split's inputs kept apart).
TabularSplit pickRows(const TabularSplit& in, const std::vector<float>& xs,
                      const std::vector<size_t>& rows, size_t xWidth, size_t yWidth);

// The fold (0 .. folds-1) of each of the training rows: a seeded shuffle dealt round the folds,
// class by class for classification (y holds the class: 0/1 or its id), so each fold holds
// nearly the same share of every class.
std::vector<int> assignFolds(const TabularSchema& s, const std::vector<float>& y, int64_t rows,
                             int folds);

} // namespace il::tasks::tabular
