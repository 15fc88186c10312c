//===- Raise.h - raising generic train IR to the fast ops -------*- C++ -*-===//
//
// The pattern families of train-raise (Passes.td) and the matching helpers
// they share. Every pattern replaces a computation with a fast op only when
// the fast op computes exactly the same thing; anything else stays as it
// is (slower, never wrong).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TRANSFORMS_RAISE_H
#define ZEROC_LIB_TRANSFORMS_RAISE_H

#include "zeroc/Dialect/Train/IR/TrainValueTypes.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace zeroc::raise {

/// Reshape / transpose / broadcast chains to their canonical form, and
/// batched matmuls of merged leading dimensions done on them
/// (RaiseViews.cpp); run after the other families, then attention again.
void populateViewPatterns(mlir::RewritePatternSet &patterns);
/// The batched-matmul unmerging of populateViewPatterns, only for a product
/// whose lhs is attention probabilities (a softmax or its dropout) merged
/// from [B, H, T, S]: what the attention family needs without the views
/// family (PyTorch's matmul by repeat_kv'ed values, run as a bmm).
void populateUnmergeProbsPatterns(mlir::RewritePatternSet &patterns);
/// Scaled-dot-product attention to train.attention (RaiseAttention.cpp),
/// with populateUnmergeProbsPatterns.
void populateAttentionPatterns(mlir::RewritePatternSet &patterns);
/// LayerNorm and RMSNorm written out to train.layernorm and train.rmsnorm
/// (RaiseNorms.cpp).
void populateNormPatterns(mlir::RewritePatternSet &patterns);
/// Cross-entropy from log_softmax and gather to train.cross_entropy
/// (RaiseLoss.cpp).
void populateLossPatterns(mlir::RewritePatternSet &patterns);
/// SiLU and tanh GELU written out to train.silu and train.gelu
/// (RaiseActivations.cpp).
void populateActivationPatterns(mlir::RewritePatternSet &patterns);
/// Rotary embeddings (rotate_half and interleaved) with constant cos/sin
/// tables to train.rope (RaiseRope.cpp).
void populateRopePatterns(mlir::RewritePatternSet &patterns);

/// The value of a splat constant (`train.fill`), if `value` is one.
std::optional<double> splatValue(mlir::Value value);

/// Whether `a` and `b` agree to a relative 1e-6 (f32 constants written in
/// decimal).
bool near(double a, double b);

/// If `op` is a binary train.add/sub/mul/div one of whose operands is a
/// splat constant and whose result has the type of the other operand,
/// returns that other operand and the constant; `constantOnLeft` tells
/// which side the constant was.
struct WithConstant {
  mlir::Value other;
  double constant;
  bool constantOnLeft;
};
std::optional<WithConstant> withConstant(mlir::Operation *op);

/// If `value` is `train.mean(x) dims = [last]` reshaped to `x`'s shape with
/// a last dimension of 1 (PyTorch's keepdim=True), returns `x`.
mlir::Value keepdimMeanOfLast(mlir::Value value);

/// Whether `value` has a single use (a matched intermediate may be
/// replaced only when nothing else reads it).
bool singleUse(mlir::Value value);

/// The ranked tensor type of `value` (TrainValueTypes.h), for the pattern
/// families that name it `raise::typeOf`.
using train::typeOf;

/// If `value` is -x (train.neg, or train.scale by -1), returns x.
mlir::Value negationOf(mlir::Value value);

} // namespace zeroc::raise

#endif // ZEROC_LIB_TRANSFORMS_RAISE_H
