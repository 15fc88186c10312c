// RUN: zeroc-opt %s --train-entry-abi -split-input-file | FileCheck %s

// A train.step function in the buffer form train-bufferize-ops leaves: the
// step number moves to host memory, the results become host out-parameters
// written by train.read_back, and the schedule's buffer becomes the
// learning rate's out-parameter (its allocation gone).

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:.*]]: memref<2x8xf32>, %[[STEP:.*]]: memref<i64, #train.host>, %[[LOSS:.*]]: memref<f32, #train.host>, %[[NORM:.*]]: memref<4xf32, #train.host>, %[[LR:.*]]: memref<f32, #train.host>)
// CHECK-SAME: attributes {train.planned, train.step}
// CHECK-NOT: memref.alloc() {{.*}} : memref<f32>
// CHECK: train.kernel ins(%[[STEP]] : memref<i64, #train.host>) outs(%[[LR]] : memref<f32, #train.host>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.lr_schedule
// CHECK: %[[P:.*]] = train.storage @w
// CHECK: train.kernel ins(%[[P]], %{{.*}}, %{{.*}}, %{{.*}}, %[[LR]], %[[STEP]] : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32, #train.host>, memref<i64, #train.host>) outs(%[[P]], %{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>, memref<4xf32>)
// CHECK: train.adamw_update
// CHECK: train.read_back %[[L:.*]], %[[LOSS]] : memref<f32>, memref<f32, #train.host>
// CHECK-NEXT: train.read_back %[[P]], %[[NORM]] : memref<4xf32>, memref<4xf32, #train.host>
// CHECK-NEXT: return{{$}}
module {
  train.param @w : tensor<4xf32> init = zeros
  train.state @w.exp_avg : tensor<4xf32> exp_avg of @w
  train.state @w.exp_avg_sq : tensor<4xf32> exp_avg_sq of @w
  func.func @train_step(%x: memref<2x8xf32>, %step: memref<i64>) -> (memref<f32>, memref<4xf32>) attributes {train.planned, train.step} {
    %lr = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
    train.kernel ins(%step : memref<i64>) outs(%lr : memref<f32>) {
    ^bb0(%s: tensor<i64>):
      %r = train.lr_schedule %s lr = 1.0e-02 schedule = constant : (tensor<i64>) -> tensor<f32>
      train.yield %r : tensor<f32>
    }
    %l = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
    train.kernel ins(%x : memref<2x8xf32>) outs(%l : memref<f32>) {
    ^bb0(%a: tensor<2x8xf32>):
      %m = train.mean %a dims = [0, 1] : tensor<2x8xf32> -> tensor<f32>
      train.yield %m : tensor<f32>
    }
    %p = train.storage @w : memref<4xf32>
    %g = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
    %m = train.storage @w.exp_avg : memref<4xf32>
    %v = train.storage @w.exp_avg_sq : memref<4xf32>
    train.kernel ins(%p, %g, %m, %v, %lr, %step : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32>, memref<i64>) outs(%p, %m, %v : memref<4xf32>, memref<4xf32>, memref<4xf32>) {
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>, %e: tensor<f32>, %f: tensor<i64>):
      %u:3 = train.adamw_update %a, %b, %c, %d, %e, %f beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.0 : tensor<4xf32>
      train.yield %u#0, %u#1, %u#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }
    return %l, %p : memref<f32>, memref<4xf32>
  }
}

// -----

// A step without a schedule reports a learning rate of 0 (a host kernel
// writes it before the results are read back); a function that is not a
// step gets no learning rate, and its rank-0 i64 argument still moves to
// host memory.

// CHECK-LABEL: func.func @no_schedule(
// CHECK-SAME: %{{[^:]*}}: memref<3xf32>, %[[OUT:[^:]*]]: memref<3xf32, #train.host>, %[[LR:[^:]*]]: memref<f32, #train.host>)
// CHECK: train.kernel ins() outs(%[[LR]] : memref<f32, #train.host>)
// CHECK-NEXT: %{{.*}} = train.fused
// CHECK-NEXT: train.fill 0.0
// CHECK: train.read_back %{{.*}}, %[[OUT]] : memref<3xf32>, memref<3xf32, #train.host>
// CHECK-NEXT: return{{$}}
// CHECK-LABEL: func.func @evaluate(
// CHECK-SAME: %{{[^:]*}}: memref<3xf32>, %{{[^:]*}}: memref<i64, #train.host>, %[[E:[^:]*]]: memref<3xf32, #train.host>)
// CHECK-SAME: attributes {train.planned}
// CHECK-NEXT: train.read_back %{{.*}}, %[[E]]
// CHECK-NEXT: return{{$}}
module {
  func.func @no_schedule(%x: memref<3xf32>) -> memref<3xf32> attributes {train.planned, train.step} {
    return %x : memref<3xf32>
  }
  func.func @evaluate(%x: memref<3xf32>, %seed: memref<i64>) -> memref<3xf32> attributes {train.planned} {
    return %x : memref<3xf32>
  }
}
