/*===- mma.h - nvcuda::wmma on the CPU -------------------------------------===*
 *
 * Part of the CPU emulation of CUDA (docs/cuda.md): 16x16x16 fragments of
 * bf16 (matrix_a, matrix_b) and f32 (accumulator). As on the hardware, each
 * lane holds num_elements = 8 of the tile's 256 elements (the emulation's
 * own mapping: lane l holds elements l, l + 32, ..., which the CUDA
 * documentation leaves unspecified), and load_matrix_sync,
 * store_matrix_sync and mma_sync are warp collectives that every lane of
 * the warp must reach with the same arguments. mma_sync gathers the lanes'
 * pieces and computes D = A B + C with the bf16 products exact and an f32
 * accumulation in k order.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_CUDA_EMULATION_MMA_H
#define ZEROC_CUDA_EMULATION_MMA_H

#include "cuda_bf16.h"
#include "cuda_runtime.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16,
                "the emulation implements 16x16x16 fragments only");
  static constexpr int num_elements = 8;
  T x[num_elements];
};

} // namespace nvcuda::wmma

namespace zc_emu {
/// The warp-collective part of the wmma calls (Emulation.cpp): every lane
/// arrives with its fragment; `op` runs once, on the last arrival, with the
/// lanes' pieces.
struct WmmaRequest {
  int op; // 0 load, 1 store, 2 mma
  const void *ptr;
  unsigned ld;
  bool colMajor;
  int elementBytes; // of memory for load / store: 2 bf16, 4 f32
  void *frag;       // this lane's fragment (load, store: 8 elements)
  const void *a, *b, *c; // mma
};
void wmmaCollective(const WmmaRequest &request, const char *what);
} // namespace zc_emu

namespace nvcuda::wmma {

template <typename Use, typename T, typename L>
inline void fill_fragment(fragment<Use, 16, 16, 16, T, L> &f, T value) {
  for (int i = 0; i < 8; ++i)
    f.x[i] = value;
}
inline void fill_fragment(fragment<accumulator, 16, 16, 16, float> &f,
                          float value) {
  for (int i = 0; i < 8; ++i)
    f.x[i] = value;
}

template <typename Use, typename L>
inline void load_matrix_sync(fragment<Use, 16, 16, 16, __nv_bfloat16, L> &f,
                             const __nv_bfloat16 *p, unsigned ld) {
  static_assert(std::is_same_v<L, row_major> || std::is_same_v<L, col_major>,
                "a matrix_a / matrix_b fragment has a row or column layout");
  zc_emu::WmmaRequest r{0, p, ld, std::is_same_v<L, col_major>, 2, f.x,
                        nullptr, nullptr, nullptr};
  zc_emu::wmmaCollective(r, "wmma::load_matrix_sync");
}
inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float> &f,
                             const float *p, unsigned ld, layout_t layout) {
  zc_emu::WmmaRequest r{0, p, ld, layout == mem_col_major, 4, f.x,
                        nullptr, nullptr, nullptr};
  zc_emu::wmmaCollective(r, "wmma::load_matrix_sync");
}
inline void store_matrix_sync(float *p,
                              const fragment<accumulator, 16, 16, 16, float> &f,
                              unsigned ld, layout_t layout) {
  zc_emu::WmmaRequest r{1, p, ld, layout == mem_col_major, 4,
                        const_cast<float *>(f.x), nullptr, nullptr, nullptr};
  zc_emu::wmmaCollective(r, "wmma::store_matrix_sync");
}
template <typename LA, typename LB>
inline void mma_sync(fragment<accumulator, 16, 16, 16, float> &d,
                     const fragment<matrix_a, 16, 16, 16, __nv_bfloat16, LA> &a,
                     const fragment<matrix_b, 16, 16, 16, __nv_bfloat16, LB> &b,
                     const fragment<accumulator, 16, 16, 16, float> &c) {
  zc_emu::WmmaRequest r{2, nullptr, 0, false, 4, d.x, a.x, b.x, c.x};
  zc_emu::wmmaCollective(r, "wmma::mma_sync");
}

} // namespace nvcuda::wmma

#endif
