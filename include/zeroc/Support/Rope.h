//===- Rope.h - the scaled frequencies of rotary embeddings ----*- C++ -*-===//
//
// Llama 3.1's and 3.2's rope_scaling (rope_type "llama3") and the "linear"
// one change each pair's inverse frequency theta^(-2i/d) before it is
// multiplied by the position. The reference evaluator, the CPU kernel and
// the CUDA kernel all call scaledInvFreq, so they compute the same angles.
// Header-only; usable in CUDA device code.
//
// Hugging Face's _compute_llama3_parameters (transformers), for an inverse
// frequency f with wavelength w = 2 pi / f, with low and high wavelengths
// original / low_freq_factor and original / high_freq_factor:
//
//   w < high wavelength:  f
//   w > low wavelength:   f / factor
//   otherwise:            (1 - s) f / factor + s f,
//                         s = (original / w - low_freq_factor)
//                             / (high_freq_factor - low_freq_factor)
//
// and linear scaling is f / factor for every pair.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_SUPPORT_ROPE_H
#define ZEROC_SUPPORT_ROPE_H

namespace zeroc::rope {

#if defined(__CUDACC__)
#define ZEROC_ROPE_HD __host__ __device__
#else
#define ZEROC_ROPE_HD
#endif

/// A train.rope's scaling: none (factor 1, original 0), linear (original 0)
/// or llama3 (original > 0).
struct Scaling {
  double factor = 1.0;
  double lowFreqFactor = 0.0;
  double highFreqFactor = 0.0;
  double original = 0.0;
};

/// The inverse frequency `invFreq` of one pair, scaled as `s` says.
ZEROC_ROPE_HD inline double scaledInvFreq(double invFreq, Scaling s) {
  if (s.original <= 0.0)
    return invFreq / s.factor;
  const double twoPi = 6.283185307179586476925286766559;
  double wavelen = twoPi / invFreq;
  double lowWavelen = s.original / s.lowFreqFactor;
  double highWavelen = s.original / s.highFreqFactor;
  if (wavelen < highWavelen)
    return invFreq;
  if (wavelen > lowWavelen)
    return invFreq / s.factor;
  double smooth = (s.original / wavelen - s.lowFreqFactor) /
                  (s.highFreqFactor - s.lowFreqFactor);
  return (1.0 - smooth) * invFreq / s.factor + smooth * invFreq;
}

} // namespace zeroc::rope

#endif // ZEROC_SUPPORT_ROPE_H
