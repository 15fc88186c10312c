//===- KernelsShape.cpp - data movement: gather, permute, reduce, pack ----===//
//
// zrt_dtype_size, embedding lookup and its scatter-add gradient, transpose,
// reduce_sum, broadcast, concat / split and pack / unpack.
//
// The N-d kernels first canonicalize their shapes (size-1 dimensions
// dropped, neighbours that stay contiguous together merged), so the common
// cases become a few long contiguous copies (memcpy) or a batch of 2-D tiled
// transposes. Data movement works on any dtype by element size; reduce_sum
// adds in double.
//
//===----------------------------------------------------------------------===//

#include "KernelsCommon.h"
#include "../Common/Shapes.h"

#include <string>
#include <vector>

using namespace zeroc::rt;

namespace {

/// Walks the multi-indices of `dims` in row-major order, tracking the
/// source offset sum(index[d] * stride[d]).
class Walker {
public:
  Walker(const Dim *dims, size_t count) : dims(dims, dims + count) {
    index.assign(count, 0);
  }
  /// Moves to row-major position `linear`.
  void seek(int64_t linear) {
    offset = 0;
    for (size_t d = dims.size(); d-- > 0;) {
      index[d] = linear % dims[d].size;
      linear /= dims[d].size;
      offset += index[d] * dims[d].stride;
    }
  }
  void next() {
    for (size_t d = dims.size(); d-- > 0;) {
      offset += dims[d].stride;
      if (++index[d] < dims[d].size)
        return;
      offset -= dims[d].stride * dims[d].size;
      index[d] = 0;
    }
  }
  int64_t offset = 0;

private:
  std::vector<Dim> dims;
  std::vector<int64_t> index;
};

/// Rows of `rowLen` elements copied from src + offset(row) to dst + row *
/// rowLen, where offset walks `outer`.
template <typename E>
void copyRows(const E *src, E *dst, const std::vector<Dim> &outer,
              int64_t rows, int64_t rowLen) {
  parallelFor(rows, rowLen + 16, [&](int64_t r0, int64_t r1) {
    Walker walk(outer.data(), outer.size());
    walk.seek(r0);
    for (int64_t r = r0; r < r1; ++r, walk.next())
      std::memcpy(dst + r * rowLen, src + walk.offset, rowLen * sizeof(E));
  });
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

constexpr int64_t kTile = 32;

template <typename E>
void transposeImpl(const E *x, E *y, std::vector<Dim> dims) {
  int64_t numel = 1;
  for (const Dim &dim : dims)
    numel *= dim.size;
  if (dims.empty() || (dims.size() == 1 && dims[0].stride == 1)) {
    parallelCopy(y, x, numel * sizeof(E));
    return;
  }
  if (dims.back().stride == 1) { // rows stay contiguous
    int64_t rowLen = dims.back().size;
    dims.pop_back();
    copyRows(x, y, dims, numel / rowLen, rowLen);
    return;
  }
  // The source's contiguous dimension q is not the output's last one L:
  // tiled 2-D transposes of (q, L) for every index of the other dims.
  // The outer dims' output offsets walk a second walker.
  TiledTranspose plan(dims);
  size_t q = plan.q, last = plan.last;
  const std::vector<Dim> &outerIn = plan.outerIn, &outerOut = plan.outerOut;
  int64_t outerCount = numel / (dims[q].size * dims[last].size);
  int64_t nq = dims[q].size, nl = dims[last].size;
  int64_t inL = dims[last].stride, outQ = plan.outStride[q];
  int64_t tilesQ = (nq + kTile - 1) / kTile;
  parallelFor(outerCount * tilesQ, kTile * nl, [&](int64_t t0, int64_t t1) {
    Walker in(outerIn.data(), outerIn.size());
    Walker out(outerOut.data(), outerOut.size());
    int64_t current = -1;
    for (int64_t task = t0; task < t1; ++task) {
      int64_t o = task / tilesQ, a0 = (task % tilesQ) * kTile;
      if (o != current) {
        in.seek(o);
        out.seek(o);
        current = o;
      }
      int64_t a1 = std::min(nq, a0 + kTile);
      const E *xb = x + in.offset;
      E *yb = y + out.offset;
      for (int64_t b0 = 0; b0 < nl; b0 += kTile) {
        int64_t b1 = std::min(nl, b0 + kTile);
        for (int64_t a = a0; a < a1; ++a)
          for (int64_t b = b0; b < b1; ++b)
            yb[a * outQ + b] = xb[a + b * inL];
      }
    }
  });
}

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

/// A canonical reduction: dims with their source strides and flags.
struct ReduceDim {
  int64_t size, stride;
  bool reduced;
};

/// Sum of x[0..n) in double.
template <typename T> ZRT_HOT double sumRun(const T *x, int64_t n) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i)
    sum += static_cast<double>(toF32(x[i]));
  return sum;
}

/// acc[c] += x[c] for c in [0, n), in double: one row of a reduction over
/// leading dimensions (a bias gradient). A kernel of its own so that it is
/// compiled for each ISA (ZRT_HOT); in the task lambda below it would be
/// baseline code.
template <typename T>
ZRT_HOT void accumulateRow(double *acc, const T *x, int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c)
    acc[c] += static_cast<double>(toF32(x[c]));
}

template <typename T>
void reduceImpl(const T *x, T *y, const std::vector<ReduceDim> &dims,
                int64_t outNumel, double scale) {
  std::vector<Dim> kept, reducedDims;
  for (const ReduceDim &dim : dims)
    (dim.reduced ? reducedDims : kept).push_back({dim.size, dim.stride});
  int64_t reduceCount = 1;
  for (const Dim &dim : reducedDims)
    reduceCount *= dim.size;

  if (!dims.empty() && !dims.back().reduced) {
    // y[g, 0..L) = sum over the reduced index of a contiguous row of L.
    int64_t len = kept.back().size;
    kept.pop_back();
    int64_t groups = outNumel / len;
    constexpr int64_t colBlock = 512;
    int64_t colBlocks = (len + colBlock - 1) / colBlock;
    // Split long reductions into fixed chunks with their own partial sums,
    // added in chunk order afterwards, when there are few (group, column
    // block) tasks.
    int64_t chunks = 1;
    if (groups * colBlocks < 64)
      chunks = std::max<int64_t>(
          1, std::min((reduceCount + 31) / 32,
                      (64 + groups * colBlocks - 1) / (groups * colBlocks)));
    std::vector<double> partial(chunks > 1 ? groups * len * chunks : 0);
    int64_t tasks = groups * colBlocks * chunks;
    parallelTasks(tasks, colBlock * reduceCount / chunks, [&](int64_t task) {
      int64_t chunk = task % chunks, rest = task / chunks;
      int64_t g = rest / colBlocks, c0 = (rest % colBlocks) * colBlock;
      int64_t c1 = std::min(len, c0 + colBlock), width = c1 - c0;
      int64_t rho0 = reduceCount * chunk / chunks;
      int64_t rho1 = reduceCount * (chunk + 1) / chunks;
      Walker group(kept.data(), kept.size());
      group.seek(g);
      Walker rho(reducedDims.data(), reducedDims.size());
      rho.seek(rho0);
      double acc[colBlock] = {};
      for (int64_t i = rho0; i < rho1; ++i, rho.next())
        accumulateRow(acc, x + group.offset + rho.offset + c0, width);
      if (chunks == 1) {
        for (int64_t c = 0; c < width; ++c)
          fromF32(static_cast<float>(acc[c] * scale), y[g * len + c0 + c]);
      } else {
        double *dst = partial.data() + (g * len + c0) * chunks;
        for (int64_t c = 0; c < width; ++c)
          dst[c * chunks + chunk] = acc[c];
      }
    });
    if (chunks > 1)
      parallelFor(groups * len, chunks, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          double sum = 0;
          for (int64_t chunk = 0; chunk < chunks; ++chunk)
            sum += partial[o * chunks + chunk];
          fromF32(static_cast<float>(sum * scale), y[o]);
        }
      });
    return;
  }

  // The last dim is reduced: each output sums contiguous runs of L.
  int64_t len = reducedDims.back().size;
  reducedDims.pop_back();
  int64_t runs = reduceCount / len;
  constexpr int64_t piece = int64_t{1} << 16;
  int64_t pieces = (len + piece - 1) / piece; // splits of very long runs
  std::vector<double> partial(outNumel * pieces);
  parallelTasks(outNumel * pieces, std::min(len, piece) * runs,
                [&](int64_t task) {
    int64_t o = task / pieces, p = task % pieces;
    int64_t l0 = p * piece, l1 = std::min(len, l0 + piece);
    Walker group(kept.data(), kept.size());
    group.seek(o);
    Walker rho(reducedDims.data(), reducedDims.size());
    double sum = 0;
    for (int64_t i = 0; i < runs; ++i, rho.next())
      sum += sumRun(x + group.offset + rho.offset + l0, l1 - l0);
    partial[task] = sum;
  });
  for (int64_t o = 0; o < outNumel; ++o) {
    double sum = 0;
    for (int64_t p = 0; p < pieces; ++p)
      sum += partial[o * pieces + p];
    fromF32(static_cast<float>(sum * scale), y[o]);
  }
}

//===----------------------------------------------------------------------===//
// Pack
//===----------------------------------------------------------------------===//

/// Runs copy(i) for every tensor i: in parallel when there are many, else
/// in turn, each copy free to thread itself (`inner`).
template <typename Fn>
void forEachPiece(int count, int64_t bytes, Fn &&copy) {
  bool outer = count >= 2 * static_cast<int64_t>(maxThreads());
  if (outer) {
    parallelTasks(count, bytes / std::max<int64_t>(count, 1) / 4,
                  [&](int64_t i) { copy(static_cast<int>(i), false); });
  } else {
    for (int i = 0; i < count; ++i)
      copy(i, true);
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
  checkIds(kernel, "id", ids, id_dtype, n, vocab);
  size_t row = static_cast<size_t>(cols) * zrt_dtype_size(dtype);
  const char *src = static_cast<const char *>(table);
  char *dst = static_cast<char *>(out);
  parallelFor(n, static_cast<int64_t>(row / 4) + 16, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      std::memcpy(dst + i * row, src + loadId(ids, id_dtype, i) * row, row);
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
  checkIds(kernel, "id", ids, id_dtype, n, vocab);
  // Positions grouped by id (a stable counting sort), so that each table
  // row is summed by one task, in position order, and written once.
  std::vector<int64_t> start(vocab + 1, 0), order(n);
  for (int64_t i = 0; i < n; ++i)
    ++start[loadId(ids, id_dtype, i) + 1];
  for (int64_t v = 0; v < vocab; ++v)
    start[v + 1] += start[v];
  {
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < n; ++i)
      order[next[loadId(ids, id_dtype, i)]++] = i;
  }
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *g = static_cast<const T *>(dy);
    T *table = static_cast<T *>(dtable);
    constexpr int64_t rowsPerTask = 64;
    int64_t tasks = (vocab + rowsPerTask - 1) / rowsPerTask;
    parallelTasks(tasks, rowsPerTask * cols + n * cols / std::max<int64_t>(tasks, 1),
                  [&](int64_t task) {
      std::vector<double> acc(cols);
      int64_t v1 = std::min(vocab, (task + 1) * rowsPerTask);
      for (int64_t v = task * rowsPerTask; v < v1; ++v) {
        T *row = table + v * cols;
        if (start[v] == start[v + 1] || v == padding_idx) {
          std::memset(static_cast<void *>(row), 0, cols * sizeof(T));
          continue;
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t p = start[v]; p < start[v + 1]; ++p) {
          const T *src = g + order[p] * cols;
          for (int64_t c = 0; c < cols; ++c)
            acc[c] += static_cast<double>(toF32(src[c]));
        }
        for (int64_t c = 0; c < cols; ++c)
          fromF32(static_cast<float>(acc[c]), row[c]);
      }
    });
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
    transposeImpl(static_cast<const E *>(x), static_cast<E *>(y),
                  canonicalize(dims));
  });
}

extern "C" void zrt_reduce_sum(zrt_dtype dtype, const void *x, void *y,
                               int rank, const int64_t *shape,
                               const uint8_t *reduced, double scale) {
  const char *kernel = "zrt_reduce_sum";
  int64_t numel = checkedNumel(kernel, rank, shape);
  int64_t outNumel = 1;
  for (int i = 0; i < rank; ++i)
    if (!reduced[i])
      outNumel *= shape[i];
  dispatchFloat(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *xt = static_cast<const T *>(x);
    T *yt = static_cast<T *>(y);
    if (outNumel == 0)
      return;
    if (numel == 0) { // sums of nothing
      std::memset(static_cast<void *>(yt), 0, outNumel * sizeof(T));
      return;
    }
    // Size-1 dims dropped, neighbours with one flag merged (x is dense).
    std::vector<ReduceDim> dims;
    int64_t stride = numel;
    for (int i = 0; i < rank; ++i) {
      stride /= shape[i];
      if (shape[i] == 1)
        continue;
      bool r = reduced[i] != 0;
      if (!dims.empty() && dims.back().reduced == r) {
        dims.back().size *= shape[i];
        dims.back().stride = stride;
      } else {
        dims.push_back({shape[i], stride, r});
      }
    }
    bool anyReduced = false;
    for (const ReduceDim &dim : dims)
      anyReduced |= dim.reduced;
    if (!anyReduced) { // a copy, scaled
      float s = static_cast<float>(scale);
      parallelFor(numel, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          fromF32(toF32(xt[i]) * s, yt[i]);
      });
      return;
    }
    reduceImpl(xt, yt, dims, outNumel, scale);
  });
}

extern "C" void zrt_broadcast(zrt_dtype dtype, const void *x, int x_rank,
                              const int64_t *x_shape, void *y, int y_rank,
                              const int64_t *y_shape) {
  const char *kernel = "zrt_broadcast";
  std::vector<Dim> dims =
      broadcastDims(kernel, x_rank, x_shape, y_rank, y_shape);
  int64_t numel = checkedNumel(kernel, y_rank, y_shape);
  dims = canonicalize(dims);
  dispatchSize(kernel, dtype, [&](auto tag) {
    using E = decltype(tag);
    const E *xe = static_cast<const E *>(x);
    E *ye = static_cast<E *>(y);
    if (numel == 0)
      return;
    if (dims.empty()) {
      ye[0] = xe[0];
      return;
    }
    Dim last = dims.back();
    dims.pop_back();
    int64_t rows = numel / last.size;
    if (last.stride == 1) {
      copyRows(xe, ye, dims, rows, last.size);
      return;
    }
    // The last dim repeats one element.
    parallelFor(rows, last.size + 16, [&](int64_t r0, int64_t r1) {
      Walker walk(dims.data(), dims.size());
      walk.seek(r0);
      for (int64_t r = r0; r < r1; ++r, walk.next())
        std::fill(ye + r * last.size, ye + (r + 1) * last.size,
                  xe[walk.offset]);
    });
  });
}

extern "C" void zrt_concat(zrt_dtype dtype, int count,
                           const void *const *inputs, const int64_t *sizes,
                           void *out, int64_t outer, int64_t inner) {
  const char *kernel = "zrt_concat";
  checkNonNegative(kernel, "outer", outer);
  checkNonNegative(kernel, "inner", inner);
  size_t esz = zrt_dtype_size(dtype);
  int64_t total = 0;
  for (int i = 0; i < count; ++i) {
    checkNonNegative(kernel, "size", sizes[i]);
    total += sizes[i];
  }
  char *dst = static_cast<char *>(out);
  size_t rowBytes = static_cast<size_t>(total * inner) * esz;
  if (outer >= 2 * maxThreads()) {
    parallelFor(outer, static_cast<int64_t>(rowBytes / 4) + 16,
                [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        size_t offset = 0;
        for (int i = 0; i < count; ++i) {
          size_t bytes = static_cast<size_t>(sizes[i] * inner) * esz;
          if (bytes) // an empty part may have no buffer (memcpy's nonnull)
            std::memcpy(dst + o * rowBytes + offset,
                        static_cast<const char *>(inputs[i]) + o * bytes, bytes);
          offset += bytes;
        }
      }
    });
    return;
  }
  for (int64_t o = 0; o < outer; ++o) {
    size_t offset = 0;
    for (int i = 0; i < count; ++i) {
      size_t bytes = static_cast<size_t>(sizes[i] * inner) * esz;
      parallelCopy(dst + o * rowBytes + offset,
                   static_cast<const char *>(inputs[i]) + o * bytes, bytes);
      offset += bytes;
    }
  }
}

extern "C" void zrt_split(zrt_dtype dtype, const void *input, int count,
                          void *const *outputs, const int64_t *sizes,
                          int64_t outer, int64_t inner) {
  const char *kernel = "zrt_split";
  checkNonNegative(kernel, "outer", outer);
  checkNonNegative(kernel, "inner", inner);
  size_t esz = zrt_dtype_size(dtype);
  int64_t total = 0;
  for (int i = 0; i < count; ++i) {
    checkNonNegative(kernel, "size", sizes[i]);
    total += sizes[i];
  }
  const char *src = static_cast<const char *>(input);
  size_t rowBytes = static_cast<size_t>(total * inner) * esz;
  if (outer >= 2 * maxThreads()) {
    parallelFor(outer, static_cast<int64_t>(rowBytes / 4) + 16,
                [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        size_t offset = 0;
        for (int i = 0; i < count; ++i) {
          size_t bytes = static_cast<size_t>(sizes[i] * inner) * esz;
          if (bytes) // an empty part may have no buffer (memcpy's nonnull)
            std::memcpy(static_cast<char *>(outputs[i]) + o * bytes,
                        src + o * rowBytes + offset, bytes);
          offset += bytes;
        }
      }
    });
    return;
  }
  for (int64_t o = 0; o < outer; ++o) {
    size_t offset = 0;
    for (int i = 0; i < count; ++i) {
      size_t bytes = static_cast<size_t>(sizes[i] * inner) * esz;
      parallelCopy(static_cast<char *>(outputs[i]) + o * bytes,
                   src + o * rowBytes + offset, bytes);
      offset += bytes;
    }
  }
}

extern "C" void zrt_pack(zrt_dtype dtype, int count,
                         const void *const *inputs, const int64_t *numels,
                         void *out) {
  const char *kernel = "zrt_pack";
  PackLayout layout(kernel, count, numels);
  size_t esz = zrt_dtype_size(dtype);
  char *dst = static_cast<char *>(out);
  forEachPiece(count, layout.total * esz, [&](int i, bool inner) {
    char *to = dst + layout.offset[i] * esz;
    size_t bytes = numels[i] * esz;
    if (inner)
      parallelCopy(to, inputs[i], bytes);
    else if (bytes > 0)
      std::memcpy(to, inputs[i], bytes);
  });
}

extern "C" void zrt_unpack(zrt_dtype dtype, const void *input, int count,
                           void *const *outputs, const int64_t *numels) {
  const char *kernel = "zrt_unpack";
  PackLayout layout(kernel, count, numels);
  size_t esz = zrt_dtype_size(dtype);
  const char *src = static_cast<const char *>(input);
  forEachPiece(count, layout.total * esz, [&](int i, bool inner) {
    const char *from = src + layout.offset[i] * esz;
    size_t bytes = numels[i] * esz;
    if (inner)
      parallelCopy(outputs[i], from, bytes);
    else if (bytes > 0)
      std::memcpy(outputs[i], from, bytes);
  });
}
