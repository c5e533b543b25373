// Multiresolution hash encoding (Müller, Evans, Schied, Keller: "Instant Neural Graphics
// Primitives with a Multiresolution Hash Encoding", SIGGRAPH 2022), for 2-D inputs: the
// geometry shared by the CPU backend (CpuKernels.cpp), the CUDA kernels (kernels/) and the
// tests' double-precision reference.
//
// Level l is a grid of N_l x N_l cells over [-1, 1]^2, N_l = floor(base * scale^l). Its
// (N_l + 1)^2 vertices each own `features` trainable numbers in a table of T = 2^log2Table rows:
// directly (row = ix + iy (N_l + 1)) while they fit, else through the paper's spatial hash
// (row = (ix * 1 xor iy * 2654435761) mod T), where different vertices may share a row. A point
// reads its cell's four vertices and interpolates bilinearly; the output is every level's
// features, level-major: y[l * features + f].
#pragma once

#include "HostDevice.h"

#include <cstdint>

namespace il {

inline constexpr int kMaxHashGridLevels = 32;

struct HashGrid {
    int32_t levels = 16;
    int32_t features = 2;
    int32_t log2Table = 15;
    float base = 16.f; // cells per side at the coarsest level
    float scale = 1.f; // growth of the cells per side from one level to the next
    float resolution[kMaxHashGridLevels] = {}; // N_l, computed once on the host (make())

    IL_HOST_DEVICE int64_t tableRows() const { return int64_t{1} << log2Table; }
    IL_HOST_DEVICE int64_t outputs() const { return int64_t{levels} * features; }
    // The table tensor: levels * tableRows() rows of `features`.
    IL_HOST_DEVICE int64_t rows() const { return int64_t{levels} * tableRows(); }
    // True when every vertex of level l has its own row (no hashing, no collisions).
    IL_HOST_DEVICE bool direct(int l) const
    {
        const int64_t side = static_cast<int64_t>(resolution[l]) + 1;
        return side * side <= tableRows();
    }
};

namespace hashgrid {

// The grid with its per-level resolutions (computed in double, so every backend uses the same
// N_l). levels in [1, kMaxHashGridLevels], log2Table in [4, 24].
inline HashGrid make(int levels, int features, int log2Table, double base, double scale)
{
    HashGrid g;
    g.levels = levels;
    g.features = features;
    g.log2Table = log2Table;
    g.base = static_cast<float>(base);
    g.scale = static_cast<float>(scale);
    double n = base;
    for (int l = 0; l < levels && l < kMaxHashGridLevels; ++l) {
        const double cells = static_cast<double>(static_cast<int64_t>(n)); // floor, n >= 1
        g.resolution[l] = static_cast<float>(cells < 1 ? 1 : cells);
        n *= scale;
    }
    return g;
}

// The cell index i of level resolution n holding coordinate x (in [-1, 1], clamped; NaN reads
// cell 0: the loss shows the NaN anyway) and the position inside it, f in [0, 1]. The CPU's SIMD
// kernel does the same operations in the same order in every lane.
IL_HOST_DEVICE inline void cell(float x, float n, int32_t& i, float& f)
{
    float p = ((x + 1.f) * 0.5f) * n;
    p = p >= 0.f ? p : 0.f;
    p = p > n ? n : p;
    int32_t c = static_cast<int32_t>(p);
    const int32_t last = static_cast<int32_t>(n) - 1;
    c = c < last ? c : last;
    i = c;
    f = p - static_cast<float>(c);
}

// The table row (within level l's block) of vertex (ix, iy).
IL_HOST_DEVICE inline uint32_t row(const HashGrid& g, int l, uint32_t ix, uint32_t iy)
{
    if (g.direct(l)) return ix + iy * (static_cast<uint32_t>(g.resolution[l]) + 1u);
    return (ix ^ (iy * 2654435761u)) & static_cast<uint32_t>(g.tableRows() - 1);
}

// A point's four vertices at level l, in the order (0,0), (1,0), (0,1), (1,1), with their
// bilinear weights. The output is ((w0 t0 + w1 t1) + w2 t2) + w3 t3 in that order.
struct Corners {
    uint32_t row[4];
    float weight[4];
};

IL_HOST_DEVICE inline Corners corners(const HashGrid& g, int l, float x, float y)
{
    int32_t ix, iy;
    float fx, fy;
    cell(x, g.resolution[l], ix, fx);
    cell(y, g.resolution[l], iy, fy);
    const auto ux = static_cast<uint32_t>(ix), uy = static_cast<uint32_t>(iy);
    Corners c;
    c.row[0] = row(g, l, ux, uy);
    c.row[1] = row(g, l, ux + 1, uy);
    c.row[2] = row(g, l, ux, uy + 1);
    c.row[3] = row(g, l, ux + 1, uy + 1);
    const float gx = 1.f - fx, gy = 1.f - fy;
    c.weight[0] = gx * gy;
    c.weight[1] = fx * gy;
    c.weight[2] = gx * fy;
    c.weight[3] = fx * fy;
    return c;
}

} // namespace hashgrid
} // namespace il
