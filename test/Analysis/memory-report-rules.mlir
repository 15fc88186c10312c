// The report's rules on a hand-written planned step (the buffer form the
// back ends print): transient memory is the running sum of memref.alloc and
// memref.dealloc in program order, by train.category; views
// (memref.reinterpret_cast), state buffers (train.storage) and host
// out-parameters cost nothing; traffic is each collective's payload by the
// ring formulas, on its grid. No train.world_size / train.zero_stage: 1
// rank, stage 0.
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s

// Ψ = 24 f32, not sharded: 96 bytes. In order:
//   +96 A  %a        A = 96           combined  96
//   +96 B  %b        B = 96           combined 192
//   +64 G  %g        G = 64           combined 256
//   -96 A  %a        (its view %v was last used by the kernel before)
//   +40 A  %c        A = 40           combined 200
//   +60 G  %all      G = 124          combined 260
//   + 4 A  %l        A = 44           combined 264 (the peak)
// Peaks: G 124, B 96, A 96; combined 264; with the model states, 360.
// Traffic on @g (3 ranks): all_reduce of a payload of 20 of 24 elements:
// 2 * 2/3 * 20 = 26.67 -> 27 elements; all_gather into 15 elements (payload
// 15, two views of it: 2 tensors): 2/3 * 15 = 10 elements. 37 elements, 148
// bytes.

// CHECK:      "parameters": 24,
// CHECK-NEXT: "world_size": 1,
// CHECK-NEXT: "stage": 0,
// CHECK-NEXT: "precision": "fp32",
// CHECK-NEXT: "step_function": "step",
// CHECK-NEXT: "per_rank_bytes": {
// CHECK-NEXT:   "parameters": 96,
// CHECK-NEXT:   "gradients": 0,
// CHECK-NEXT:   "optimizer_states": 0,
// CHECK-NEXT:   "model_states": 96
// CHECK-NEXT: },
// CHECK-NEXT: "transient_bytes": {
// CHECK-NEXT:   "gathered_parameters": 124,
// CHECK-NEXT:   "gradient_buckets": 96,
// CHECK-NEXT:   "activations": 96,
// CHECK-NEXT:   "peak": 264
// CHECK-NEXT: },
// CHECK-NEXT: "peak_bytes_per_rank": 360,
// CHECK-NEXT: "communication_per_rank_per_step": {
// CHECK-NEXT:   "elements": 37,
// CHECK-NEXT:   "bytes": 148,
// CHECK:      "collectives": [
// CHECK-NEXT:   {"op":"all_reduce","elements":27,"bytes":108,"tensors":1,"payload_elements":20,"buffer_elements":24,"ranks":3,"async":true},
// CHECK-NEXT:   {"op":"all_gather","elements":10,"bytes":40,"tensors":2,"payload_elements":15,"buffer_elements":15,"ranks":3,"async":true}
// CHECK-NEXT: ]

module {
  shard.grid @g(shape = 3)
  train.param @p : tensor<6x4xf32> init = zeros
  func.func @step(%x: memref<6x4xf32>, %out: memref<f32, #train.host>) attributes {train.step, train.planned} {
    %w = train.storage @p : memref<6x4xf32>
    %a = memref.alloc() {train.category = #train.category<activations>} : memref<24xf32>
    %b = memref.alloc() {train.category = #train.category<gradient_buckets>} : memref<24xf32>
    %g = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<16xf32>
    %v = memref.reinterpret_cast %a to offset: [0], sizes: [6, 4], strides: [4, 1] : memref<24xf32> to memref<6x4xf32>
    train.kernel ins(%x, %w : memref<6x4xf32>, memref<6x4xf32>) outs(%v : memref<6x4xf32>) {
    ^bb0(%p0: tensor<6x4xf32>, %p1: tensor<6x4xf32>):
      %s = train.fused %p0, %p1 : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32> {
      ^bb0(%u: tensor<6x4xf32>, %t: tensor<6x4xf32>):
        %y = train.add %u, %t : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
        train.yield %y : tensor<6x4xf32>
      }
      train.yield %s : tensor<6x4xf32>
    }
    train.kernel ins(%a : memref<24xf32>) outs(%b : memref<24xf32>) {
    ^bb0(%p0: tensor<24xf32>):
      %s = train.fused %p0 : (tensor<24xf32>) -> tensor<24xf32> {
      ^bb0(%u: tensor<24xf32>):
        %y = train.scale %u by 2.0 : tensor<24xf32>
        train.yield %y : tensor<24xf32>
      }
      train.yield %s : tensor<24xf32>
    }
    memref.dealloc %a : memref<24xf32>
    %r = train.collective_start all_reduce %b, %b on @g payload = 20 : memref<24xf32>, memref<24xf32>
    train.collective_wait %r
    %c = memref.alloc() {train.category = #train.category<activations>} : memref<10xf32>
    %bs = memref.reinterpret_cast %b to offset: [0], sizes: [8], strides: [1] : memref<24xf32> to memref<8xf32>
    %h = memref.reinterpret_cast %b to offset: [0], sizes: [16], strides: [1] : memref<24xf32> to memref<16xf32>
    train.kernel ins(%h : memref<16xf32>) outs(%g : memref<16xf32>) {
    ^bb0(%p0: tensor<16xf32>):
      %s = train.fused %p0 : (tensor<16xf32>) -> tensor<16xf32> {
      ^bb0(%u: tensor<16xf32>):
        %y = train.scale %u by 1.0 : tensor<16xf32>
        train.yield %y : tensor<16xf32>
      }
      train.yield %s : tensor<16xf32>
    }
    %send = memref.reinterpret_cast %g to offset: [0], sizes: [5], strides: [1] : memref<16xf32> to memref<5xf32>
    %all = memref.alloc() {train.category = #train.category<gathered_parameters>} : memref<15xf32>
    %q = train.collective_start all_gather %send, %all on @g payload = 15 : memref<5xf32>, memref<15xf32>
    train.collective_wait %q
    %q0 = memref.reinterpret_cast %all to offset: [0], sizes: [10], strides: [1] : memref<15xf32> to memref<10xf32>
    %q1 = memref.reinterpret_cast %all to offset: [10], sizes: [5], strides: [1] : memref<15xf32> to memref<5xf32, strided<[1], offset: 10>>
    %l = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
    train.kernel ins(%q0 : memref<10xf32>) outs(%l : memref<f32>) {
    ^bb0(%p0: tensor<10xf32>):
      %s = train.sum %p0 dims = [0] : tensor<10xf32> -> tensor<f32>
      train.yield %s : tensor<f32>
    }
    train.read_back %l, %out : memref<f32>, memref<f32, #train.host>
    memref.dealloc %g : memref<16xf32>
    memref.dealloc %all : memref<15xf32>
    memref.dealloc %b : memref<24xf32>
    memref.dealloc %c : memref<10xf32>
    memref.dealloc %l : memref<f32>
    return
  }
}
