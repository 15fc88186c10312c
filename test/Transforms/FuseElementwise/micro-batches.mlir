// RUN: zeroc-opt %s --train-fuse-elementwise | FileCheck %s

// Gradient accumulation (train-accumulate): each micro-batch's running sum
// is computed in its own micro-batch. Fusing the chain of sums into the
// last one's loop would keep every micro-batch's gradient alive until the
// last micro-batch. Within a micro-batch, chains fuse as usual.

// CHECK-LABEL: func.func @sums
// CHECK:      %[[S1:.*]] = train.fused %arg0, %arg1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK:        train.add {{.*}}train.micro_batch = 1
// CHECK:      }
// CHECK:      %[[S2:.*]] = train.fused %arg2, %[[S1]] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK:        train.scale {{.*}}train.micro_batch = 2
// CHECK-NEXT:   train.add {{.*}}train.micro_batch = 2
// CHECK:      }
// CHECK:      return %[[S2]]
func.func @sums(%g0: tensor<8xf32>, %g1: tensor<8xf32>, %g2: tensor<8xf32>) -> tensor<8xf32> {
  %s1 = train.add %g0, %g1 {train.accumulate, train.micro_batch = 1 : i64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %h2 = train.scale %g2 by 2.0 {train.micro_batch = 2 : i64} : tensor<8xf32>
  %s2 = train.add %s1, %h2 {train.accumulate, train.micro_batch = 2 : i64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %s2 : tensor<8xf32>
}
