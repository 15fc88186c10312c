//===- Random.h - the initializer RNG every backend shares ---*- C++ -*-===//
//
// Header-only, no dependencies. Every backend (the reference evaluator, the
// generated runtime, Python tests) initializes parameters with exactly this
// arithmetic, so that they agree bit for bit.
//
// The generator is counter-based: element i of a tensor is a pure function
// of (name, seed, i). A rank can therefore initialize any shard (element
// range) of a parameter on its own, and gets the same numbers whatever the
// world size.
//
// The exact formula (all arithmetic on unsigned 64-bit integers, mod 2^64):
//
//   GAMMA            = 0x9E3779B97F4A7C15
//   fnv1a64(s)       : h = 0xCBF29CE484222325;
//                      for each byte b of s: h = (h ^ b) * 0x100000001B3
//   splitmix64(x)    : z = x + GAMMA;
//                      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//                      z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//                      return z ^ (z >> 31)
//   key(name, S)     = fnv1a64(name) ^ (S * GAMMA)
//   draw(key, j)     = splitmix64(key + j * GAMMA)
//                      (the j-th output, from 0, of the splitmix64 stream
//                      whose state starts at `key`)
//
//   standard normal z of element i (Box-Muller, cosine branch):
//     u1 = ((draw(key, 2i)     >> 11) + 1) * 2^-53     in (0, 1]
//     u2 =  (draw(key, 2i + 1) >> 11)      * 2^-53     in [0, 1)
//     z  = sqrt(-2 ln u1) * cos(6.283185307179586 * u2)
//
//   element i of parameter `name` with init = normal std = s under seed S:
//     s * z(key(name, S), i), computed in double, then rounded to the
//     parameter's element type (f32 by a cast; bf16 to nearest even of the
//     f32 value).
//
//   uniform integer in [0, K) for element i:
//     min(K - 1, floor(((draw(key, i) >> 11) * 2^-53) * K))
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_SUPPORT_RANDOM_H
#define ZEROC_SUPPORT_RANDOM_H

#include <cmath>
#include <cstdint>
#include <string_view>

namespace zeroc::random {

inline constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;
inline constexpr double kTwoPi = 6.283185307179586;
inline constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;

/// 64-bit FNV-1a of the bytes of `text`.
inline uint64_t fnv1a64(std::string_view text) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (unsigned char byte : text) {
    hash ^= byte;
    hash *= 0x100000001B3ull;
  }
  return hash;
}

/// One step of splitmix64: advances the state `x` by GAMMA and mixes it.
inline uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + kGamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The stream key of tensor `name` under `seed`.
inline uint64_t streamKey(std::string_view name, uint64_t seed) {
  return fnv1a64(name) ^ (seed * kGamma);
}

/// The j-th 64-bit draw of the stream `key`.
inline uint64_t draw(uint64_t key, uint64_t j) {
  return splitmix64(key + j * kGamma);
}

/// The standard normal value of element `i` of stream `key`.
inline double standardNormal(uint64_t key, uint64_t i) {
  double u1 = static_cast<double>((draw(key, 2 * i) >> 11) + 1) * kTwoToMinus53;
  double u2 = static_cast<double>(draw(key, 2 * i + 1) >> 11) * kTwoToMinus53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

/// Element `i` of a normal(0, std) tensor called `name` under `seed`, before
/// rounding to the tensor's element type.
inline double normal(std::string_view name, uint64_t seed, double std,
                     uint64_t i) {
  return std * standardNormal(streamKey(name, seed), i);
}

/// Element `i` of a tensor of integers uniform in [0, k) called `name`
/// under `seed`.
inline int64_t uniformInt(std::string_view name, uint64_t seed, int64_t k,
                          uint64_t i) {
  double u =
      static_cast<double>(draw(streamKey(name, seed), i) >> 11) * kTwoToMinus53;
  int64_t value = static_cast<int64_t>(std::floor(u * static_cast<double>(k)));
  return value < k ? value : k - 1; // guards a product that rounds up to k
}

//===----------------------------------------------------------------------===//
// Dropout masks: Philox-4x32-10 (Salmon et al., SC11; Random123's
// philox4x32_10), usable in CUDA device code too.
//
//   counter (c0, c1, c2, c3) = (lo(q), hi(q), lo(step), hi(step)),
//                              q = position / 4
//   key (k0, k1)             = (lo(seed), hi(seed))
//   round: (hi0, lo0) = M0 * c0, (hi1, lo1) = M1 * c2 (32x32 -> 64 bits),
//          c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0);
//          then the key is bumped by (W0, W1) before each further round;
//          10 rounds. M0 = 0xD2511F53, M1 = 0xCD9E8D57,
//          W0 = 0x9E3779B9, W1 = 0xBB67AE85.
//   word w = output[position % 4]
//   kept  <=> (w >> 8) * 2^-24 >= p, i.e. (w >> 8) >= ceil(p * 2^24)
//
// `position` is the element's row-major index in the global batch (see
// train.dropout), so the mask is the same on any world size.
//===----------------------------------------------------------------------===//

#if defined(__CUDACC__)
#define ZEROC_RANDOM_HD __host__ __device__
#else
#define ZEROC_RANDOM_HD
#endif

struct Philox4x32 {
  uint32_t v[4];
};

/// Philox-4x32-10 of `counter` under `key`.
ZEROC_RANDOM_HD inline Philox4x32 philox4x32(Philox4x32 counter, uint32_t k0,
                                             uint32_t k1) {
  uint32_t *c = counter.v;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c[0];
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c[2];
    uint32_t next[4] = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0,
                        static_cast<uint32_t>(p1),
                        static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1,
                        static_cast<uint32_t>(p0)};
    for (int i = 0; i < 4; ++i)
      c[i] = next[i];
  }
  return counter;
}

/// The 32-bit word of the dropout stream `seed` for element `position` at
/// training step `step`.
ZEROC_RANDOM_HD inline uint32_t dropoutWord(uint64_t seed, uint64_t step,
                                            uint64_t position) {
  uint64_t q = position >> 2;
  Philox4x32 counter = {{static_cast<uint32_t>(q), static_cast<uint32_t>(q >> 32),
                         static_cast<uint32_t>(step),
                         static_cast<uint32_t>(step >> 32)}};
  Philox4x32 out = philox4x32(counter, static_cast<uint32_t>(seed),
                              static_cast<uint32_t>(seed >> 32));
  return out.v[position & 3];
}

/// The drop threshold of probability `p`, ceil(p * 2^24): an element is
/// kept when the top 24 bits of its word are at least this.
ZEROC_RANDOM_HD inline uint32_t dropoutThreshold(double p) {
  double t = p * 16777216.0;
  if (!(t > 0.0))
    return 0u;
  if (t >= 16777216.0)
    return 16777216u;
  uint32_t whole = static_cast<uint32_t>(t);
  return static_cast<double>(whole) < t ? whole + 1 : whole;
}

/// Whether element `position` survives dropout with `threshold`
/// (dropoutThreshold(p)) at `step` under `seed`.
ZEROC_RANDOM_HD inline bool dropoutKeeps(uint64_t seed, uint64_t step,
                                         uint64_t position,
                                         uint32_t threshold) {
  return (dropoutWord(seed, step, position) >> 8) >= threshold;
}

/// The global position of element `i` of a local tensor whose dimension
/// along the batch has `rows` entries, which are global entries
/// [`offset`, `offset + rows`) of `globalRows`, with `inner` elements per
/// entry (the product of the later dimensions). Without a batch split,
/// rows = globalRows and offset = 0 make it `i`.
ZEROC_RANDOM_HD inline uint64_t dropoutPosition(uint64_t i, uint64_t inner,
                                                uint64_t rows, uint64_t offset,
                                                uint64_t globalRows) {
  uint64_t rest = i % inner, entry = i / inner;
  uint64_t row = entry % rows, outer = entry / rows;
  return (outer * globalRows + offset + row) * inner + rest;
}

} // namespace zeroc::random

#endif // ZEROC_SUPPORT_RANDOM_H
