//===- LlamaDerivatives.h - derivative rules of the Llama ops ---*- C++ -*-===//
//
// One function per op of TrainLlamaOps.td: given the cotangent `dy` of the
// op's result, it builds the cotangents of the op's operands and hands each
// to `Cotangents::accumulate`. train-autodiff calls them from its switch
// over ops (lib/Transforms/Autodiff.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_LLAMADERIVATIVES_H
#define ZEROC_LIB_TRANSFORMS_LLAMADERIVATIVES_H

#include "zeroc/Dialect/Train/IR/TrainBuilder.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include <functional>

namespace zeroc::autodiff {

/// Where a rule sends cotangents: `isActive(v)` says whether `v` needs one
/// (depends on a parameter); `accumulate(v, dv)` adds `dv` to it.
struct Cotangents {
  std::function<bool(mlir::Value)> isActive;
  std::function<void(mlir::Value, mlir::Value)> accumulate;
};

/// d rmsnorm: train.rmsnorm_grad gives dx and dweight.
mlir::LogicalResult rmsnormDerivative(train::TrainBuilder &tb,
                                      train::RmsNormOp op, mlir::Value dy,
                                      const Cotangents &out);
/// d silu: train.silu_grad.
mlir::LogicalResult siluDerivative(train::TrainBuilder &tb, train::SiluOp op,
                                   mlir::Value dy, const Cotangents &out);
/// d rope: the inverse rotation of dy (a rotation's transpose).
mlir::LogicalResult ropeDerivative(train::TrainBuilder &tb, train::RopeOp op,
                                   mlir::Value dy, const Cotangents &out);
/// d slice: dy scattered into zeros of the input's shape.
mlir::LogicalResult sliceDerivative(train::TrainBuilder &tb, train::SliceOp op,
                                    mlir::Value dy, const Cotangents &out);
/// d dropout: the same dropout of dy (same seed, step and positions, hence
/// the same mask, recomputed).
mlir::LogicalResult dropoutDerivative(train::TrainBuilder &tb,
                                      train::DropoutOp op, mlir::Value dy,
                                      const Cotangents &out);

} // namespace zeroc::autodiff

#endif // ZEROC_LIB_TRANSFORMS_LLAMADERIVATIVES_H
