// RUN: zeroc-opt %S/../Zero/Inputs/mlp.mlir --train-logits | FileCheck %s --check-prefix=NOTOKENS
// RUN: zeroc-opt %zeroc_src/examples/mlp.mlir --train-logits | FileCheck %s

// @logits is the forward function without its loss, for one sequence: the
// targets argument is gone and the batch of 6 became 1.
// CHECK-LABEL: func.func @forward(
// CHECK-LABEL: func.func @logits(
// CHECK-SAME: %[[T:.*]]: tensor<1x5xi32>) -> tensor<1x5x37xf32> attributes {train.logits} {
// CHECK: train.embedding %{{.*}}[%[[T]]] : (tensor<37x8xf32>, tensor<1x5xi32>) -> tensor<1x5x8xf32>
// CHECK: %[[L:.*]] = train.add %{{.*}}, %{{.*}} : (tensor<1x5x37xf32>, tensor<37xf32>) -> tensor<1x5x37xf32>
// CHECK-NOT: train.cross_entropy
// CHECK: return %[[L]] : tensor<1x5x37xf32>

// The test MLP's first argument is features, not tokens, but @logits does
// not care: it only drops the targets.
// NOTOKENS: func.func @logits(%{{.*}}: tensor<1x3xf32>) -> tensor<1x5xf32> attributes {train.logits}
