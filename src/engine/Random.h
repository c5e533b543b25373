// Seeded random numbers that are identical on every platform and standard library.
// std::normal_distribution and friends are implementation-defined, so we do our own.
// Every random choice in a run derives from one user seed: streams are split by purpose and
// index (Rng::derive), so resuming at epoch e reproduces epoch e's shuffle exactly.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string_view>
#include <vector>

namespace il {

class Rng {
public:
    explicit Rng(uint64_t seed = 0) { reseed(seed); }

    void reseed(uint64_t seed)
    {
        uint64_t x = seed;
        for (auto& s : m_s)
            s = splitMix(x);
    }

    // A stream for one purpose ("init", "shuffle", "fourier"...) and index, from a base seed.
    static Rng derive(uint64_t seed, std::string_view purpose, uint64_t index = 0)
    {
        uint64_t h = 1469598103934665603ull; // FNV-1a over the purpose
        for (char c : purpose)
            h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        uint64_t x = seed ^ h;
        uint64_t a = splitMix(x);
        x = a ^ (index * 0x9E3779B97F4A7C15ull);
        return Rng(splitMix(x));
    }

    uint64_t next()
    {
        const uint64_t result = rotl(m_s[1] * 5, 7) * 9;
        const uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = rotl(m_s[3], 45);
        return result;
    }

    // Uniform in [0, 1), 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    // Uniform integer in [0, n), unbiased (Lemire's method is overkill here; rejection is fine).
    uint64_t below(uint64_t n)
    {
        const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
        uint64_t r;
        do {
            r = next();
        } while (r >= limit);
        return r % n;
    }
    // Standard normal (Box-Muller in double precision).
    double normal()
    {
        if (m_haveSpare) {
            m_haveSpare = false;
            return m_spare;
        }
        double u1;
        do {
            u1 = uniform();
        } while (u1 <= 0.0);
        const double u2 = uniform();
        const double r = std::sqrt(-2.0 * std::log(u1));
        m_spare = r * std::sin(2.0 * std::numbers::pi * u2);
        m_haveSpare = true;
        return r * std::cos(2.0 * std::numbers::pi * u2);
    }

    // Fisher-Yates permutation of 0..n-1.
    std::vector<int32_t> permutation(int64_t n)
    {
        std::vector<int32_t> p(static_cast<size_t>(n));
        permutationInto(p);
        return p;
    }
    // The same permutation written into p (p.size() = n), with no allocation.
    void permutationInto(std::vector<int32_t>& p)
    {
        const auto n = static_cast<int64_t>(p.size());
        for (int64_t i = 0; i < n; ++i)
            p[static_cast<size_t>(i)] = static_cast<int32_t>(i);
        for (int64_t i = n - 1; i > 0; --i) {
            const auto j = static_cast<int64_t>(below(static_cast<uint64_t>(i + 1)));
            std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
        }
    }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static uint64_t splitMix(uint64_t& x)
    {
        uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint64_t m_s[4] = {};
    double m_spare = 0;
    bool m_haveSpare = false;
};

} // namespace il
