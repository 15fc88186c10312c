// RUN: zeroc-opt %s --train-verify-emittable | FileCheck %s
// RUN: zeroc-opt %S/../../../examples/mlp.mlir --train-pipeline="stage=2 world-size=2" --train-planning | FileCheck %s --check-prefix=PIPELINE

// The buffer form passes unchanged, and the planning pipeline ends in it.

// CHECK-LABEL: func.func @f
// CHECK: train.collective_start all_reduce
// CHECK: train.collective_wait
// CHECK: memref.dealloc
module attributes {train.world_size = 2 : i64} {
  shard.grid @dp(shape = 2)
  func.func @f(%x: memref<8xf32>, %out: memref<8xf32, #train.host>) attributes {train.planned} {
    %a = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<8xf32>
    train.kernel ins(%x : memref<8xf32>) outs(%a : memref<8xf32>) {
    ^bb0(%p: tensor<8xf32>):
      %s = train.fused %p : (tensor<8xf32>) -> tensor<8xf32> {
      ^bb0(%u: tensor<8xf32>):
        %t = train.scale %u by 2.0 : tensor<8xf32>
        train.yield %t : tensor<8xf32>
      }
      train.yield %s : tensor<8xf32>
    }
    %r = train.collective_start all_reduce %a, %a on @dp payload = 8 : memref<8xf32>, memref<8xf32>
    train.collective_wait %r
    train.read_back %a, %out : memref<8xf32>, memref<8xf32, #train.host>
    memref.dealloc %a : memref<8xf32>
    return
  }
}

// PIPELINE-LABEL: func.func @train_step
// PIPELINE-SAME: train.planned
// PIPELINE: train.collective_start reduce_scatter
