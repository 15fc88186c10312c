// RUN: zeroc-opt %s -split-input-file --train-verify-emittable -verify-diagnostics

// Every error of train-verify-emittable.

// expected-error @+1 {{'func.func' op is not in buffer form (train.planned); the back ends print planned functions only (run train-bufferize)}}
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @foreign(%x: memref<4xf32>) attributes {train.planned} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op is not part of the buffer form the back ends print (docs/backend.md)}}
  %v = memref.load %x[%c0] : memref<4xf32>
  return
}

// -----

func.func @no_category(%x: memref<4xf32>) attributes {train.planned} {
  // expected-error @+1 {{'memref.alloc' op has no train.category: every allocation is counted in a memory category}}
  %a = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

func.func @not_freed(%x: memref<4xf32>) attributes {train.planned} {
  // expected-error @+1 {{'memref.alloc' op must be freed exactly once, but has 0 memref.dealloc (run train-deallocate)}}
  %a = memref.alloc() {train.category = #train.category<activations>} : memref<4xf32>
  return
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @not_waited(%x: memref<4xf32>) attributes {train.planned} {
    // expected-error @+1 {{'train.collective_start' op must be waited for exactly once, but its request has 0 use(s)}}
    %r = train.collective_start all_reduce %x, %x on @dp payload = 4 : memref<4xf32>, memref<4xf32>
    return
  }
}

// -----

func.func @two_ops(%x: memref<4xf32>, %y: memref<f32>) attributes {train.planned} {
  // expected-error @+1 {{'train.kernel' op must run one op (a train.fused region for an elementwise chain)}}
  train.kernel ins(%x : memref<4xf32>) outs(%y : memref<f32>) {
  ^bb0(%p: tensor<4xf32>):
    %s = train.softmax %p : tensor<4xf32>
    %t = train.sum %s dims = [0] : tensor<4xf32> -> tensor<f32>
    train.yield %t : tensor<f32>
  }
  return
}

// -----

func.func @bare_elementwise(%x: memref<4xf32>, %y: memref<4xf32>) attributes {train.planned} {
  // expected-error @+1 {{'train.kernel' op runs 'train.relu' outside a train.fused region (run train-fuse-elementwise)}}
  train.kernel ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%p: tensor<4xf32>):
    %s = train.relu %p : tensor<4xf32>
    train.yield %s : tensor<4xf32>
  }
  return
}
