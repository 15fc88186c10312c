//===- Shapes.cpp - shape helpers of the N-d kernels, CPU and CUDA --------===//

#include "Shapes.h"

#include "zeroc/Runtime/zrt.h"

namespace zeroc::rt {

std::string formatShape(int rank, const int64_t *shape) {
  std::string text = "[";
  for (int i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

int64_t checkedNumel(const char *kernel, int rank, const int64_t *shape) {
  if (rank < 0)
    zrt_fail("%s: rank must be >= 0, got %d", kernel, rank);
  if (rank > 0 && !shape)
    zrt_fail("%s: NULL shape", kernel);
  int64_t numel = 1;
  for (int i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      zrt_fail("%s: negative dimension in shape %s", kernel,
               formatShape(rank, shape).c_str());
    numel *= shape[i];
  }
  return numel;
}

std::vector<Dim> canonicalize(const std::vector<Dim> &dims) {
  std::vector<Dim> out;
  for (const Dim &dim : dims) {
    if (dim.size == 1)
      continue;
    if (!out.empty() && out.back().stride == dim.stride * dim.size) {
      out.back().size *= dim.size;
      out.back().stride = dim.stride;
      continue;
    }
    out.push_back(dim);
  }
  return out;
}

std::vector<Dim> transposeDims(const char *kernel, int rank,
                               const int64_t *shape, const int64_t *perm) {
  checkedNumel(kernel, rank, shape);
  if (rank > 0 && !perm)
    zrt_fail("%s: NULL perm", kernel);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]])
      zrt_fail("%s: perm is not a permutation of [0, %d)", kernel, rank);
    seen[perm[i]] = true;
  }
  std::vector<int64_t> stride(rank);
  for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
    stride[d] = s;
    s *= shape[d];
  }
  std::vector<Dim> dims;
  for (int i = 0; i < rank; ++i)
    dims.push_back({shape[perm[i]], stride[perm[i]]});
  return dims;
}

std::vector<Dim> broadcastDims(const char *kernel, int x_rank,
                               const int64_t *x_shape, int y_rank,
                               const int64_t *y_shape) {
  checkedNumel(kernel, x_rank, x_shape);
  checkedNumel(kernel, y_rank, y_shape);
  int lead = y_rank - x_rank;
  bool ok = lead >= 0;
  for (int i = 0; ok && i < x_rank; ++i)
    ok = x_shape[i] == 1 || x_shape[i] == y_shape[lead + i];
  if (!ok)
    zrt_fail("%s: cannot broadcast %s to %s", kernel,
             formatShape(x_rank, x_shape).c_str(),
             formatShape(y_rank, y_shape).c_str());
  std::vector<int64_t> xStride(x_rank);
  int64_t stride = 1;
  for (int i = x_rank - 1; i >= 0; --i) {
    xStride[i] = stride;
    stride *= x_shape[i];
  }
  std::vector<Dim> dims;
  for (int d = 0; d < y_rank; ++d) {
    int xd = d - lead;
    bool repeated = xd < 0 || x_shape[xd] == 1;
    dims.push_back({y_shape[d], repeated ? 0 : xStride[xd]});
  }
  return dims;
}

TiledTranspose::TiledTranspose(const std::vector<Dim> &dims) {
  while (dims[q].stride != 1)
    ++q;
  last = dims.size() - 1;
  outStride.resize(dims.size());
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    outStride[d] = stride;
    stride *= dims[d].size;
  }
  for (size_t d = 0; d < dims.size(); ++d)
    if (d != q && d != last) {
      outerIn.push_back(dims[d]);
      outerOut.push_back({dims[d].size, outStride[d]});
    }
}

PackLayout::PackLayout(const char *kernel, int count, const int64_t *numels) {
  if (count < 0)
    zrt_fail("%s: count must be >= 0, got %d", kernel, count);
  for (int i = 0; i < count; ++i) {
    if (numels[i] < 0)
      zrt_fail("%s: numel %d is negative (%lld)", kernel, i,
               static_cast<long long>(numels[i]));
    offset.push_back(total);
    total += numels[i];
  }
}

} // namespace zeroc::rt
