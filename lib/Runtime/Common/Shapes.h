//===- Shapes.h - shape helpers of the N-d kernels, CPU and CUDA -*- C++ -*-===//
//
// Both runtimes' transpose, broadcast and reduce kernels first check their
// shape arguments and canonicalize the dimensions they walk (on the host),
// then run loops (CPU) or kernels (CUDA) over the few that remain.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_COMMON_SHAPES_H
#define ZEROC_LIB_RUNTIME_COMMON_SHAPES_H

#include <cstdint>
#include <string>
#include <vector>

namespace zeroc::rt {

/// "[2, 3, 4]" for messages.
std::string formatShape(int rank, const int64_t *shape);

/// The number of elements of `shape`; fails naming `kernel` on a negative
/// rank or dimension, or a NULL shape.
int64_t checkedNumel(const char *kernel, int rank, const int64_t *shape);

/// One dimension in iteration order: its size and its stride in the source.
struct Dim {
  int64_t size, stride;
};

/// Drops size-1 dimensions and merges neighbours a, b (in iteration order)
/// with a.stride == b.stride * b.size: they walk memory as one dimension.
std::vector<Dim> canonicalize(const std::vector<Dim> &dims);

/// A transpose whose source-contiguous dimension q (stride 1) is not the
/// output's last one: tiled 2-D transposes of (q, last) for every index of
/// the other, outer dimensions. `dims` is canonical, in output order.
struct TiledTranspose {
  size_t q = 0, last = 0;
  /// Row-major strides of the output, per dimension of `dims`.
  std::vector<int64_t> outStride;
  /// The outer dimensions in output order, with their source strides and
  /// with their output strides.
  std::vector<Dim> outerIn, outerOut;
  explicit TiledTranspose(const std::vector<Dim> &dims);
};

/// train.pack's layout: the tensors end to end, tensor i's n_i elements at
/// offset[i] = the sum of n_j, j < i, of a buffer of `total` elements.
/// Fails naming `kernel` on a bad count or numel.
struct PackLayout {
  std::vector<int64_t> offset;
  int64_t total = 0;
  PackLayout(const char *kernel, int count, const int64_t *numels);
};

/// zrt_transpose's walk: output dimension i is source dimension perm[i],
/// with its row-major stride (not canonicalized). Fails naming `kernel`
/// when `perm` is not a permutation of [0, rank).
std::vector<Dim> transposeDims(const char *kernel, int rank,
                               const int64_t *shape, const int64_t *perm);

/// zrt_broadcast's walk: each dimension of y_shape with x's stride there (0
/// where x is repeated), not canonicalized. Fails naming `kernel` when x
/// does not broadcast to y (NumPy's rule, right-aligned).
std::vector<Dim> broadcastDims(const char *kernel, int x_rank,
                               const int64_t *x_shape, int y_rank,
                               const int64_t *y_shape);

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_SHAPES_H
