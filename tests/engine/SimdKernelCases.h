// One call of each function of CpuKernels.h (with each activation, optimizer rule, loss and
// MathFunction it takes) on seeded random inputs of a given length, its outputs and returned
// sums collected as bytes: testSimdKernels runs every case on every SIMD target and compares the
// bytes with memcmp, since CpuKernels.h promises the same bits on every target.
#pragma once

#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

namespace simdcases {

// The outputs of one run, in order, as raw bytes.
struct Bytes {
    std::vector<unsigned char> data;
    void add(const void* p, size_t n);
    void add(const std::vector<float>& v) { add(v.data(), v.size() * sizeof(float)); }
    template <class T> void value(T x) { add(&x, sizeof x); }
};

struct Case {
    QString name;
    std::function<Bytes(int64_t n)> run; // same inputs for the same n, whatever the target
};

// Every case; an optimizer rule without hyperparameters here is reported in *missing.
std::vector<Case> allCases(QString* missing);

} // namespace simdcases
