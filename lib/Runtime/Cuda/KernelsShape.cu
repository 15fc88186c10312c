//===- KernelsShape.cu - gather, permute, reduce, pack on the GPU ---------===//
//
// Embedding lookup and its scatter-add gradient, transpose, reduce_sum,
// broadcast, concat / split and pack / unpack.
//
// As on the CPU, the N-d kernels first canonicalize their shapes on the
// host (size-1 dimensions dropped, neighbours that stay contiguous merged)
// and pass the result by value (at most kMaxRank dimensions). Data movement
// works on any dtype by element size and moves the widest unit (up to 16
// bytes) that every row length, stride and pointer allows: a transpose that
// keeps the last dimension, a broadcast of a bias or a concat is a gather of
// 16-byte units; a transpose that moves the last dimension goes through
// 32 x 32 tiles in shared memory. Index arithmetic is 32-bit when the sizes
// allow. reduce_sum adds in double, over fixed chunks of the reduction
// whose partial sums are added in order (deterministic).
//
// The embedding kernels check ids on the device: one out of range is never
// read (its output row is zeros, its gradient is dropped) and the device
// error record names it for zrt_read_f32 to report.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.cuh"
#include "../Common/Shapes.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

using namespace zeroc::rt::cuda;
using zeroc::rt::broadcastDims;
using zeroc::rt::canonicalize;
using zeroc::rt::checkedNumel;
using zeroc::rt::Dim;
using zeroc::rt::PackLayout;
using zeroc::rt::TiledTranspose;
using zeroc::rt::transposeDims;

namespace {

constexpr int kMaxRank = 8;
constexpr int kThreads = 256;

//===----------------------------------------------------------------------===//
// Units of data movement
//===----------------------------------------------------------------------===//

template <int kBytes> struct UnitOf;
template <> struct UnitOf<1> {
  using type = uint8_t;
};
template <> struct UnitOf<2> {
  using type = uint16_t;
};
template <> struct UnitOf<4> {
  using type = uint32_t;
};
template <> struct UnitOf<8> {
  using type = uint2;
};
template <> struct UnitOf<16> {
  using type = uint4;
};

/// Calls fn(UnitOf<bytes>::type{}) for bytes in {1, 2, 4, 8, 16}.
template <typename Fn> void withUnit(int64_t bytes, Fn &&fn) {
  switch (bytes) {
  case 16:
    fn(uint4{});
    return;
  case 8:
    fn(uint2{});
    return;
  case 4:
    fn(uint32_t{});
    return;
  case 2:
    fn(uint16_t{});
    return;
  default:
    fn(uint8_t{});
    return;
  }
}

/// The largest unit in {16, 8, 4, 2, 1} bytes that divides every byte count
/// and address given.
int64_t unitBytes(std::initializer_list<int64_t> byteCounts,
                  std::initializer_list<const void *> ptrs) {
  uint64_t bits = 16;
  for (int64_t b : byteCounts)
    bits |= static_cast<uint64_t>(b);
  for (const void *p : ptrs)
    bits |= static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  return static_cast<int64_t>(bits & (~bits + 1));
}

/// Whether 32-bit indices cover every index and offset below `bound`.
bool fits32(int64_t bound) { return bound < (int64_t{1} << 31); }

//===----------------------------------------------------------------------===//
// Canonical shapes
//===----------------------------------------------------------------------===//

void checkRank(const char *kernel, size_t rank) {
  if (rank > static_cast<size_t>(kMaxRank))
    zrt_fail("%s: %zu dimensions remain after merging contiguous ones; the "
             "CUDA kernels handle at most %d",
             kernel, rank, kMaxRank);
}

/// Dimensions passed to a kernel by value: sizes and source strides, in
/// output (row-major) order.
struct DimsArg {
  int rank;
  int64_t size[kMaxRank];
  int64_t stride[kMaxRank];
};

DimsArg toArg(const std::vector<Dim> &dims) {
  DimsArg arg = {};
  arg.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    arg.size[d] = dims[d].size;
    arg.stride[d] = dims[d].stride;
  }
  return arg;
}

/// The source offset of row-major position `linear` of `dims`.
template <typename I>
__device__ __forceinline__ I offsetOf(const DimsArg &dims, I linear) {
  I offset = 0;
#pragma unroll
  for (int d = kMaxRank - 1; d >= 0; --d) {
    if (d < dims.rank) {
      I size = static_cast<I>(dims.size[d]);
      offset += (linear % size) * static_cast<I>(dims.stride[d]);
      linear /= size;
    }
  }
  return offset;
}

//===----------------------------------------------------------------------===//
// Gather: y[i] = x[offset(i)]
//===----------------------------------------------------------------------===//

template <typename U, typename I>
__global__ void gatherKernel(const U *__restrict__ x, U *__restrict__ y,
                             DimsArg dims, I numel) {
  for (I i = static_cast<I>(firstIndex()); i < numel;
       i += static_cast<I>(indexStride()))
    y[i] = x[offsetOf(dims, i)];
}

/// y (dense, `numel` elements of `esz` bytes) = x gathered through the
/// canonical `dims` (strides in elements, may be 0).
void gather(const char *kernel, const void *x, void *y, std::vector<Dim> dims,
            int64_t numel, int64_t esz) {
  checkRank(kernel, dims.size());
  cudaStream_t stream = computeStream();
  if (dims.empty() || (dims.size() == 1 && dims[0].stride == 1)) {
    ZRT_CUDA(cudaMemcpyAsync(y, x, static_cast<size_t>(numel * esz),
                             cudaMemcpyDeviceToDevice, stream));
    return;
  }
  // Widen to the largest unit that the contiguous last dimension, the other
  // strides and the pointers allow.
  int64_t unit = esz;
  if (dims.back().stride == 1) {
    std::vector<int64_t> counts = {dims.back().size * esz};
    for (size_t d = 0; d + 1 < dims.size(); ++d)
      counts.push_back(dims[d].stride * esz);
    uint64_t bits = 16;
    for (int64_t c : counts)
      bits |= static_cast<uint64_t>(c);
    bits |= static_cast<uint64_t>(reinterpret_cast<uintptr_t>(x));
    bits |= static_cast<uint64_t>(reinterpret_cast<uintptr_t>(y));
    unit = std::max<int64_t>(esz, static_cast<int64_t>(bits & (~bits + 1)));
    if (unit > esz) {
      int64_t g = unit / esz;
      dims.back().size /= g;
      for (size_t d = 0; d + 1 < dims.size(); ++d)
        dims[d].stride /= g;
    }
  } else {
    unit = esz;
  }
  int64_t units = numel * esz / unit;
  int64_t maxOffset = 0;
  for (const Dim &dim : dims)
    maxOffset += (dim.size - 1) * dim.stride;
  DimsArg arg = toArg(dims);
  withUnit(unit, [&](auto tag) {
    using U = decltype(tag);
    if (fits32(units) && fits32(maxOffset + 1))
      gatherKernel<U, uint32_t><<<blocksFor(units, kThreads), kThreads, 0,
                                  stream>>>(static_cast<const U *>(x),
                                            static_cast<U *>(y), arg,
                                            static_cast<uint32_t>(units));
    else
      gatherKernel<U, uint64_t><<<blocksFor(units, kThreads), kThreads, 0,
                                  stream>>>(static_cast<const U *>(x),
                                            static_cast<U *>(y), arg,
                                            static_cast<uint64_t>(units));
    checkLaunch("gatherKernel");
  });
}

//===----------------------------------------------------------------------===//
// Transpose of the innermost dimension: 32 x 32 tiles
//===----------------------------------------------------------------------===//

constexpr int kTile = 32;
constexpr int kTileRows = 8;

/// The source's contiguous dimension q (nq elements, output stride outQ)
/// against the output's last dimension (nl elements, source stride inL),
/// for every index of the outer dimensions (in output order, with their
/// source and output strides).
struct TransposeArg {
  DimsArg outerIn, outerOut;
  int64_t outer, nq, nl, inL, outQ;
};

template <typename E>
__global__ void transposeKernel(const E *__restrict__ x, E *__restrict__ y,
                                TransposeArg a) {
  __shared__ E tile[kTile][kTile + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int64_t tilesQ = (a.nq + kTile - 1) / kTile, tilesL = (a.nl + kTile - 1) / kTile;
  int64_t perOuter = tilesQ * tilesL;
  for (int64_t t = blockIdx.x; t < a.outer * perOuter; t += gridDim.x) {
    int64_t o = t / perOuter, rest = t % perOuter;
    int64_t q0 = (rest / tilesL) * kTile, l0 = (rest % tilesL) * kTile;
    const E *xb = x + offsetOf(a.outerIn, o);
    E *yb = y + offsetOf(a.outerOut, o);
    // Read along q (contiguous in x), write along l (contiguous in y).
    for (int j = ty; j < kTile; j += kTileRows) {
      int64_t q = q0 + tx, l = l0 + j;
      if (q < a.nq && l < a.nl)
        tile[j][tx] = xb[q + l * a.inL];
    }
    __syncthreads();
    for (int j = ty; j < kTile; j += kTileRows) {
      int64_t q = q0 + j, l = l0 + tx;
      if (q < a.nq && l < a.nl)
        yb[q * a.outQ + l] = tile[tx][j];
    }
    __syncthreads();
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The reduction's kept dims (output order, source strides) and reduced
/// dims (source strides), canonical.
struct ReduceArg {
  DimsArg kept, reduced;
};

/// Column kernel, the last canonical dim kept: one thread per output o,
/// blockIdx.y the chunk [j0, j1) of the reduction's `count` positions.
/// Writes y[o] = T(sum * scale) with one chunk, else partial[chunk][o].
template <typename T>
__global__ void reduceColumnsKernel(const T *__restrict__ x, T *__restrict__ y,
                                    double *__restrict__ partial,
                                    ReduceArg a, int64_t outNumel,
                                    int64_t count, int64_t chunks,
                                    double scale) {
  int64_t chunk = blockIdx.y;
  int64_t j0 = count * chunk / chunks, j1 = count * (chunk + 1) / chunks;
  for (int64_t o = firstIndex(); o < outNumel; o += indexStride()) {
    const T *base = x + offsetOf(a.kept, o);
    double sum = 0;
    if (a.reduced.rank == 1) {
      int64_t stride = a.reduced.stride[0];
      for (int64_t j = j0; j < j1; ++j)
        sum += static_cast<double>(toF32(base[j * stride]));
    } else {
      // Walk the reduced dims incrementally from j0.
      int64_t index[kMaxRank];
      int64_t rest = j0, offset = 0;
      for (int d = a.reduced.rank - 1; d >= 0; --d) {
        index[d] = rest % a.reduced.size[d];
        rest /= a.reduced.size[d];
        offset += index[d] * a.reduced.stride[d];
      }
      for (int64_t j = j0; j < j1; ++j) {
        sum += static_cast<double>(toF32(base[offset]));
        for (int d = a.reduced.rank - 1; d >= 0; --d) {
          offset += a.reduced.stride[d];
          if (++index[d] < a.reduced.size[d])
            break;
          offset -= a.reduced.stride[d] * a.reduced.size[d];
          index[d] = 0;
        }
      }
    }
    if (chunks == 1)
      fromF32(static_cast<float>(sum * scale), y[o]);
    else
      partial[chunk * outNumel + o] = sum;
  }
}

/// Row kernel, the last canonical dim reduced (contiguous runs of `len`):
/// one warp per (output, chunk of the count = runs * len positions).
template <typename T>
__global__ void reduceRowsKernel(const T *__restrict__ x, T *__restrict__ y,
                                 double *__restrict__ partial, ReduceArg a,
                                 int64_t outNumel, int64_t len, int64_t count,
                                 int64_t chunks, double scale) {
  int lane = threadIdx.x % kWarp;
  // a.reduced excludes the last (contiguous) dim: it walks the runs.
  for (int64_t w = firstRow(); w < outNumel * chunks; w += rowStride()) {
    int64_t o = w / chunks, chunk = w % chunks;
    int64_t j0 = count * chunk / chunks, j1 = count * (chunk + 1) / chunks;
    const T *base = x + offsetOf(a.kept, o);
    double sum = 0;
    if (j1 > j0) {
      for (int64_t run = j0 / len; run <= (j1 - 1) / len; ++run) {
        const T *row = base + offsetOf(a.reduced, run);
        int64_t c0 = std::max<int64_t>(j0 - run * len, 0);
        int64_t c1 = std::min<int64_t>(j1 - run * len, len);
        for (int64_t c = c0 + lane; c < c1; c += kWarp)
          sum += static_cast<double>(toF32(row[c]));
      }
    }
    sum = warpSum(sum);
    if (lane == 0) {
      if (chunks == 1)
        fromF32(static_cast<float>(sum * scale), y[o]);
      else
        partial[chunk * outNumel + o] = sum;
    }
  }
}

/// y[o] = T(scale * sum over chunks of partial[chunk][o]), in chunk order.
template <typename T>
__global__ void reduceFinalKernel(const double *__restrict__ partial,
                                  T *__restrict__ y, int64_t outNumel,
                                  int64_t chunks, double scale) {
  for (int64_t o = firstIndex(); o < outNumel; o += indexStride()) {
    double sum = 0;
    for (int64_t c = 0; c < chunks; ++c)
      sum += partial[c * outNumel + o];
    fromF32(static_cast<float>(sum * scale), y[o]);
  }
}

template <typename T>
__global__ void scaleKernel(const T *x, T *y, int64_t n, float scale) {
  for (int64_t i = firstIndex(); i < n; i += indexStride())
    fromF32(toF32(x[i]) * scale, y[i]);
}

//===----------------------------------------------------------------------===//
// Pieces: concat, split, pack, unpack
//===----------------------------------------------------------------------===//

constexpr int kMaxPieces = 16;

/// Piece i copies element (r, j), r < rows, j < width, from
/// src[srcOffset + r * srcPitch + j] to dst[dstOffset + r * dstPitch + j].
/// In units.
struct PiecesArg {
  int count;
  const void *src[kMaxPieces];
  void *dst[kMaxPieces];
  int64_t rows[kMaxPieces], width[kMaxPieces];
  int64_t srcPitch[kMaxPieces], dstPitch[kMaxPieces];
  int64_t srcOffset[kMaxPieces], dstOffset[kMaxPieces];
};

template <typename U, typename I>
__global__ void piecesKernel(PiecesArg a) {
  int p = blockIdx.y;
  I width = static_cast<I>(a.width[p]);
  I total = static_cast<I>(a.rows[p]) * width;
  const U *src = static_cast<const U *>(a.src[p]) + a.srcOffset[p];
  U *dst = static_cast<U *>(a.dst[p]) + a.dstOffset[p];
  I srcPitch = static_cast<I>(a.srcPitch[p]), dstPitch = static_cast<I>(a.dstPitch[p]);
  for (I e = static_cast<I>(firstIndex()); e < total;
       e += static_cast<I>(indexStride())) {
    I r = e / width, j = e % width;
    dst[r * dstPitch + j] = src[r * srcPitch + j];
  }
}

/// One piece in elements, before widening.
struct Piece {
  const void *src;
  void *dst;
  int64_t rows, width, srcPitch, dstPitch, srcOffset, dstOffset;
};

/// Runs the pieces in launches of at most kMaxPieces, each moving the
/// widest unit its pieces allow.
void copyPieces(const std::vector<Piece> &all, int64_t esz) {
  cudaStream_t stream = computeStream();
  std::vector<Piece> pieces;
  for (const Piece &p : all)
    if (p.rows > 0 && p.width > 0)
      pieces.push_back(p);
  for (size_t first = 0; first < pieces.size(); first += kMaxPieces) {
    size_t count = std::min<size_t>(kMaxPieces, pieces.size() - first);
    uint64_t bits = 16;
    int64_t bound = 0, most = 0;
    for (size_t i = first; i < first + count; ++i) {
      const Piece &p = pieces[i];
      for (int64_t v : {p.width, p.srcPitch, p.dstPitch, p.srcOffset,
                        p.dstOffset})
        bits |= static_cast<uint64_t>(v * esz);
      bits |= static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p.src));
      bits |= static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p.dst));
      int64_t total = p.rows * p.width;
      most = std::max(most, total);
      bound = std::max({bound, total,
                        (p.rows - 1) * p.srcPitch + p.width,
                        (p.rows - 1) * p.dstPitch + p.width});
    }
    int64_t unit = std::max<int64_t>(esz, static_cast<int64_t>(bits & (~bits + 1)));
    int64_t g = unit / esz;
    PiecesArg arg = {};
    arg.count = static_cast<int>(count);
    for (size_t i = 0; i < count; ++i) {
      const Piece &p = pieces[first + i];
      arg.src[i] = p.src;
      arg.dst[i] = p.dst;
      arg.rows[i] = p.rows;
      arg.width[i] = p.width / g;
      arg.srcPitch[i] = p.srcPitch / g;
      arg.dstPitch[i] = p.dstPitch / g;
      arg.srcOffset[i] = p.srcOffset / g;
      arg.dstOffset[i] = p.dstOffset / g;
    }
    int64_t units = most / g;
    dim3 grid(blocksFor(units, kThreads), static_cast<unsigned>(count));
    withUnit(unit, [&](auto tag) {
      using U = decltype(tag);
      if (fits32(bound / g + 1))
        piecesKernel<U, uint32_t><<<grid, kThreads, 0, stream>>>(arg);
      else
        piecesKernel<U, uint64_t><<<grid, kThreads, 0, stream>>>(arg);
      checkLaunch("piecesKernel");
    });
  }
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

/// out row i = table row ids[i] (zeros for an id out of range, recorded);
/// one warp per row of `units` units.
template <typename U>
__global__ void embeddingKernel(const U *__restrict__ table,
                                const void *__restrict__ ids, bool idsI64,
                                U *__restrict__ out, int64_t n, int64_t vocab,
                                int64_t units, DeviceError *errors) {
  int lane = threadIdx.x % kWarp;
  for (int64_t i = firstRow(); i < n; i += rowStride()) {
    int64_t id = loadId(ids, idsI64, i);
    bool valid = id >= 0 && id < vocab;
    if (!valid && lane == 0)
      recordIdError(errors, kIdEmbedding, id, i, vocab);
    const U *src = table + (valid ? id : 0) * units;
    U *dst = out + i * units;
    for (int64_t c = lane; c < units; c += kWarp)
      dst[c] = valid ? src[c] : U{};
  }
}

/// acc[ids[i], :] += dy[i, :] (f32 atomics); ids out of range are dropped
/// (recorded), and so are those of the padding row.
template <typename T>
__global__ void embeddingGradKernel(const T *__restrict__ dy,
                                    const void *__restrict__ ids, bool idsI64,
                                    float *__restrict__ acc, int64_t n,
                                    int64_t vocab, int64_t cols,
                                    int64_t padding, DeviceError *errors) {
  int lane = threadIdx.x % kWarp;
  for (int64_t i = firstRow(); i < n; i += rowStride()) {
    int64_t id = loadId(ids, idsI64, i);
    if (id < 0 || id >= vocab) {
      if (lane == 0)
        recordIdError(errors, kIdEmbeddingGrad, id, i, vocab);
      continue;
    }
    if (id == padding)
      continue;
    const T *src = dy + i * cols;
    float *dst = acc + id * cols;
    for (int64_t c = lane; c < cols; c += kWarp)
      atomicAdd(dst + c, toF32(src[c]));
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

extern "C" void zrt_embedding(zrt_dtype dtype, const void *table,
                              const void *ids, zrt_dtype id_dtype, void *out,
                              int64_t n, int64_t vocab, int64_t cols) {
  const char *kernel = "zrt_embedding";
  checkNonNegative(kernel, "n", n);
  checkNonNegative(kernel, "vocab", vocab);
  checkNonNegative(kernel, "cols", cols);
  dispatchFloat(kernel, dtype, [](auto) {});
  checkIdDtype(kernel, "id", ids, id_dtype, n);
  if (n == 0 || cols == 0)
    return;
  int64_t esz = static_cast<int64_t>(zrt_dtype_size(dtype));
  int64_t unit = std::max<int64_t>(esz, unitBytes({cols * esz}, {table, out}));
  int64_t units = cols * esz / unit;
  withUnit(unit, [&](auto tag) {
    using U = decltype(tag);
    embeddingKernel<U><<<rowBlocks(n), kRowThreads, 0, computeStream()>>>(
        static_cast<const U *>(table), ids, id_dtype == ZRT_I64,
        static_cast<U *>(out), n, vocab, units, deviceErrors());
    checkLaunch("embeddingKernel");
  });
}

extern "C" void zrt_embedding_grad(zrt_dtype dtype, const void *dy,
                                   const void *ids, zrt_dtype id_dtype,
                                   void *dtable, int64_t n, int64_t vocab,
                                   int64_t cols, int64_t padding_idx) {
  const char *kernel = "zrt_embedding_grad";
  checkNonNegative(kernel, "n", n);
  checkNonNegative(kernel, "vocab", vocab);
  checkNonNegative(kernel, "cols", cols);
  dispatchFloat(kernel, dtype, [](auto) {});
  checkIdDtype(kernel, "id", ids, id_dtype, n);
  if (vocab == 0 || cols == 0)
    return;
  cudaStream_t stream = computeStream();
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    size_t tableElems = static_cast<size_t>(vocab * cols);
    // f32 sums straight into dtable; bf16 through f32 scratch, rounded once.
    Scratch scratch(std::is_same_v<T, float> ? 0 : tableElems * sizeof(float));
    float *acc = std::is_same_v<T, float> ? static_cast<float *>(dtable)
                                          : scratch.as<float>();
    ZRT_CUDA(cudaMemsetAsync(acc, 0, tableElems * sizeof(float), stream));
    if (n > 0) {
      embeddingGradKernel<T><<<rowBlocks(n), kRowThreads, 0, stream>>>(
          static_cast<const T *>(dy), ids, id_dtype == ZRT_I64, acc, n, vocab,
          cols, padding_idx, deviceErrors());
      checkLaunch("embeddingGradKernel");
    }
    if constexpr (!std::is_same_v<T, float>)
      convertF32ToBf16(acc, static_cast<bf16 *>(dtable),
                       static_cast<int64_t>(tableElems));
  });
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

extern "C" void zrt_transpose(zrt_dtype dtype, const void *x, void *y,
                              int rank, const int64_t *shape,
                              const int64_t *perm) {
  const char *kernel = "zrt_transpose";
  std::vector<Dim> dims = transposeDims(kernel, rank, shape, perm);
  int64_t numel = checkedNumel(kernel, rank, shape);
  dispatchSize(kernel, dtype, [&](auto tag) {
    using E = decltype(tag);
    if (numel == 0)
      return;
    std::vector<Dim> canon = canonicalize(dims);
    checkRank(kernel, canon.size());
    if (canon.empty() || canon.back().stride == 1) { // rows stay contiguous
      gather(kernel, x, y, canon, numel, sizeof(E));
      return;
    }
    // The source's contiguous dimension q is not the output's last one:
    // tiled 2-D transposes of (q, last) for every index of the other dims.
    TiledTranspose plan(canon);
    TransposeArg arg;
    arg.outerIn = toArg(plan.outerIn);
    arg.outerOut = toArg(plan.outerOut);
    arg.nq = canon[plan.q].size;
    arg.nl = canon[plan.last].size;
    arg.outer = numel / (arg.nq * arg.nl);
    arg.inL = canon[plan.last].stride;
    arg.outQ = plan.outStride[plan.q];
    int64_t tiles = arg.outer * ((arg.nq + kTile - 1) / kTile) *
                    ((arg.nl + kTile - 1) / kTile);
    int64_t cap = static_cast<int64_t>(multiprocessors()) * 32;
    unsigned blocks = static_cast<unsigned>(std::min(tiles, cap));
    transposeKernel<E><<<blocks, dim3(kTile, kTileRows), 0, computeStream()>>>(
        static_cast<const E *>(x), static_cast<E *>(y), arg);
    checkLaunch("transposeKernel");
  });
}

extern "C" void zrt_reduce_sum(zrt_dtype dtype, const void *x, void *y,
                               int rank, const int64_t *shape,
                               const uint8_t *reduced, double scale) {
  const char *kernel = "zrt_reduce_sum";
  int64_t numel = checkedNumel(kernel, rank, shape);
  if (rank > 0 && !reduced)
    zrt_fail("%s: NULL reduced flags", kernel);
  int64_t outNumel = 1;
  for (int i = 0; i < rank; ++i)
    if (!reduced[i])
      outNumel *= shape[i];
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = computeStream();
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    if (outNumel == 0)
      return;
    if (numel == 0) { // sums of nothing
      ZRT_CUDA(cudaMemsetAsync(y, 0, static_cast<size_t>(outNumel) * sizeof(T),
                               stream));
      return;
    }
    // Size-1 dims dropped, neighbours with one flag merged (x is dense).
    std::vector<Dim> kept, red;
    bool lastReduced = false;
    int64_t stride = numel;
    for (int i = 0; i < rank; ++i) {
      stride /= shape[i];
      if (shape[i] == 1)
        continue;
      bool r = reduced[i] != 0;
      std::vector<Dim> &dims = r ? red : kept;
      if (!dims.empty() && lastReduced == r &&
          dims.back().stride == stride * shape[i]) {
        dims.back().size *= shape[i];
        dims.back().stride = stride;
      } else {
        dims.push_back({shape[i], stride});
      }
      lastReduced = r;
    }
    if (red.empty()) { // a copy, scaled
      scaleKernel<T><<<blocksFor(numel), kThreads, 0, stream>>>(
          xt, yt, numel, static_cast<float>(scale));
      checkLaunch("scaleKernel");
      return;
    }
    checkRank(kernel, std::max(kept.size(), red.size()));
    int64_t count = numel / outNumel; // positions summed per output
    int64_t target = static_cast<int64_t>(multiprocessors()) * 2048;
    if (!lastReduced) {
      // Threads along the contiguous kept dim; chunks of the reduction when
      // there are few outputs.
      int64_t chunks = 1;
      if (outNumel < target)
        chunks = std::min<int64_t>({(target + outNumel - 1) / outNumel,
                                    (count + 31) / 32, 65535});
      chunks = std::max<int64_t>(chunks, 1);
      Scratch partial(chunks > 1 ? static_cast<size_t>(chunks * outNumel) *
                                       sizeof(double)
                                 : 0);
      ReduceArg arg{toArg(kept), toArg(red)};
      dim3 grid(blocksFor(outNumel, kThreads), static_cast<unsigned>(chunks));
      reduceColumnsKernel<T><<<grid, kThreads, 0, stream>>>(
          xt, yt, partial.as<double>(), arg, outNumel, count, chunks, scale);
      checkLaunch("reduceColumnsKernel");
      if (chunks > 1) {
        reduceFinalKernel<T><<<blocksFor(outNumel), kThreads, 0, stream>>>(
            partial.as<double>(), yt, outNumel, chunks, scale);
        checkLaunch("reduceFinalKernel");
      }
      return;
    }
    // Contiguous runs of `len` along the last (reduced) dim: a warp per
    // output and chunk.
    int64_t len = red.back().size;
    red.pop_back();
    int64_t warps = target / kWarp;
    int64_t chunks = 1;
    if (outNumel < warps)
      chunks = std::min<int64_t>((warps + outNumel - 1) / outNumel,
                                 (count + 1023) / 1024);
    chunks = std::max<int64_t>(chunks, 1);
    Scratch partial(chunks > 1 ? static_cast<size_t>(chunks * outNumel) *
                                     sizeof(double)
                               : 0);
    ReduceArg arg{toArg(kept), toArg(red)};
    reduceRowsKernel<T><<<rowBlocks(outNumel * chunks), kRowThreads, 0,
                          stream>>>(xt, yt, partial.as<double>(), arg,
                                    outNumel, len, count, chunks, scale);
    checkLaunch("reduceRowsKernel");
    if (chunks > 1) {
      reduceFinalKernel<T><<<blocksFor(outNumel), kThreads, 0, stream>>>(
          partial.as<double>(), yt, outNumel, chunks, scale);
      checkLaunch("reduceFinalKernel");
    }
  });
}

extern "C" void zrt_broadcast(zrt_dtype dtype, const void *x, int x_rank,
                              const int64_t *x_shape, void *y, int y_rank,
                              const int64_t *y_shape) {
  const char *kernel = "zrt_broadcast";
  std::vector<Dim> dims =
      broadcastDims(kernel, x_rank, x_shape, y_rank, y_shape);
  int64_t numel = checkedNumel(kernel, y_rank, y_shape);
  dispatchSize(kernel, dtype, [&](auto tag) {
    using E = decltype(tag);
    if (numel == 0)
      return;
    gather(kernel, x, y, canonicalize(dims), numel, sizeof(E));
  });
}

namespace {

/// Concat (toOut) or split of tensors viewed as [outer, size_i * inner].
void concatOrSplit(const char *kernel, zrt_dtype dtype, int count,
                   const void *const *parts, void *const *outParts,
                   const int64_t *sizes, void *whole, const void *wholeIn,
                   int64_t outer, int64_t inner, bool toOut) {
  checkNonNegative(kernel, "outer", outer);
  checkNonNegative(kernel, "inner", inner);
  if (count < 0)
    zrt_fail("%s: count must be >= 0, got %d", kernel, count);
  int64_t esz = static_cast<int64_t>(zrt_dtype_size(dtype));
  int64_t total = 0;
  for (int i = 0; i < count; ++i) {
    checkNonNegative(kernel, "size", sizes[i]);
    total += sizes[i];
  }
  std::vector<Piece> pieces;
  int64_t offset = 0;
  for (int i = 0; i < count; ++i) {
    int64_t width = sizes[i] * inner;
    Piece p;
    p.rows = outer;
    p.width = width;
    if (toOut) {
      p.src = parts[i];
      p.dst = whole;
      p.srcPitch = width;
      p.dstPitch = total * inner;
      p.srcOffset = 0;
      p.dstOffset = offset;
    } else {
      p.src = wholeIn;
      p.dst = outParts[i];
      p.srcPitch = total * inner;
      p.dstPitch = width;
      p.srcOffset = offset;
      p.dstOffset = 0;
    }
    pieces.push_back(p);
    offset += width;
  }
  copyPieces(pieces, esz);
}

} // namespace

extern "C" void zrt_concat(zrt_dtype dtype, int count,
                           const void *const *inputs, const int64_t *sizes,
                           void *out, int64_t outer, int64_t inner) {
  concatOrSplit("zrt_concat", dtype, count, inputs, nullptr, sizes, out,
                nullptr, outer, inner, true);
}

extern "C" void zrt_split(zrt_dtype dtype, const void *input, int count,
                          void *const *outputs, const int64_t *sizes,
                          int64_t outer, int64_t inner) {
  concatOrSplit("zrt_split", dtype, count, nullptr, outputs, sizes, nullptr,
                input, outer, inner, false);
}

extern "C" void zrt_pack(zrt_dtype dtype, int count,
                         const void *const *inputs, const int64_t *numels,
                         void *out) {
  const char *kernel = "zrt_pack";
  PackLayout layout(kernel, count, numels);
  int64_t esz = static_cast<int64_t>(zrt_dtype_size(dtype));
  std::vector<Piece> pieces;
  for (int i = 0; i < count; ++i)
    pieces.push_back({inputs[i], out, 1, numels[i], numels[i], numels[i], 0,
                      layout.offset[i]});
  copyPieces(pieces, esz);
}

extern "C" void zrt_unpack(zrt_dtype dtype, const void *input, int count,
                           void *const *outputs, const int64_t *numels) {
  const char *kernel = "zrt_unpack";
  PackLayout layout(kernel, count, numels);
  int64_t esz = static_cast<int64_t>(zrt_dtype_size(dtype));
  std::vector<Piece> pieces;
  for (int i = 0; i < count; ++i)
    pieces.push_back({input, outputs[i], 1, numels[i], numels[i], numels[i],
                      layout.offset[i], 0});
  copyPieces(pieces, esz);
}
