// What the backends allocate, and so what the report counts: elementwise
// ops fused into their user's loop, optimizer updates computed in place on
// the state they read and the learning rate (a host scalar) own no buffer.
// The C++ and CUDA emitters decide these in their plan
// (lib/Target/Cpp/FunctionEmitter.cpp); the executables' measured peaks
// equal the report's (test/Integration/remat.py, dropout.py).
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s

// Liveness (op index: bytes, all activations; [def, end]; %x is a read,
// a view of @r):
//   1 %c    fill, all its users elementwise: fused, no buffer
//   2 %a    its one use is %g's loop (same shape): fused, no buffer
//   3 %g    32 [3, 5]  two uses: its own buffer, read at 5 inside %m's loop
//   4 %s    fused into %m
//   5 %m    32 [5, 6]  its user is not elementwise
//   6 %n     4 [6, 20] returned
//   7 %t    32 [7, 9]  not fused: a write comes before its user
//   9 %u    32 [9, 14] the gradient of the update
//  10 %lr   the learning rate: a host scalar, no buffer
//  14 %p1, %v1: in place on @p and @p.exp_avg_sq, no buffer; %m1 32 [14, 17]
//           is not (the read of @p.exp_avg has a second reader, %k)
//  15 %k     4 [15, 19]
//  19 %r     4 [19, 20]
// Peak: 68 at 9 (%n + %t + %u) and at 14 (%n + %u + %m1), as the C++
// emitter's zrt_alloc and zrt_free calls for this step add up. Counting
// every result would give 136 (at 14: %n, %u, the 4 bytes of %lr and the
// three updated tensors).

// CHECK:      "transient_bytes": {
// CHECK-NEXT:   "gathered_parameters": 0,
// CHECK-NEXT:   "gradient_buckets": 0,
// CHECK-NEXT:   "activations": 68,
// CHECK-NEXT:   "peak": 68
// CHECK-NEXT: },

module {
  train.optimizer adamw lr = 1.0e-03 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08
  train.param @p : tensor<8xf32> init = zeros
  train.param @q : tensor<8xf32> init = zeros
  train.param @r : tensor<8xf32> init = zeros
  train.state @p.exp_avg : tensor<8xf32> exp_avg of @p
  train.state @p.exp_avg_sq : tensor<8xf32> exp_avg_sq of @p
  func.func @step(%tokens: tensor<1x8xi32>, %targets: tensor<1x8xi32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.step} {
    %x = train.read @r : tensor<8xf32>
    %c = train.fill 2.0 : tensor<8xf32>
    %a = train.add %x, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %g = train.gelu %a tanh : tensor<8xf32>
    %s = train.scale %g by 0.5 : tensor<8xf32>
    %m = train.mul %s, %g : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %n = train.squared_norm %m : tensor<8xf32> -> tensor<f32>
    %t = train.scale %x by 3.0 : tensor<8xf32>
    train.write %x to @q : tensor<8xf32>
    %u = train.add %t, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %lr = train.lr_schedule %step lr = 1.000000e-03 schedule = constant : (tensor<i64>) -> tensor<f32>
    %p0 = train.read @p : tensor<8xf32>
    %m0 = train.read @p.exp_avg : tensor<8xf32>
    %v0 = train.read @p.exp_avg_sq : tensor<8xf32>
    %p1, %m1, %v1 = train.adamw_update %p0, %u, %m0, %v0, %lr, %step beta1 = 9.000000e-01 beta2 = 9.500000e-01 eps = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<8xf32>
    %k = train.squared_norm %m0 : tensor<8xf32> -> tensor<f32>
    train.write %p1 to @p : tensor<8xf32>
    train.write %m1 to @p.exp_avg : tensor<8xf32>
    train.write %v1 to @p.exp_avg_sq : tensor<8xf32>
    %r = train.add %n, %k : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %r, %n : tensor<f32>, tensor<f32>
  }
}
