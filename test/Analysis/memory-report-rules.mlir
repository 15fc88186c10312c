// Defaults and upstream collectives: no train.world_size / train.zero_stage
// (1 rank, stage 0); train.reshape is a view that keeps its source alive;
// shard.* collectives size their ring from the grid axes they run over.
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s

// Ψ = 24 f32, not sharded: 96 bytes. Liveness (op index: bytes [def, end]):
//   0 %a    96 A [0, 2]  (through its reshape %r, used at 2)
//   2 %s    96 B [2, 3]
//   3 %t    96 B [3, 7]  (through its reshape %back, returned at 7)
//   4 %gath 96 G [4, 7]  (through its unpack %u, returned at 7)
// Peaks: A 96, B 192 (at 3), G 96; combined 192 (at 2, 3 and 4).
// Traffic:
//   all_reduce over grid_axes = [1] of 2x3: N = 3, 2 * 2/3 * 24 = 32 elements
//   all_reduce without grid_axes: a group of one rank, nothing sent
//   all_gather over [0, 1]: N = 6; unpacked to 23 real elements of the 24:
//   5/6 * 23 = 19.17 -> 19 elements.

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
// CHECK-NEXT:   "gathered_parameters": 96,
// CHECK-NEXT:   "gradient_buckets": 192,
// CHECK-NEXT:   "activations": 96,
// CHECK-NEXT:   "peak": 192
// CHECK-NEXT: },
// CHECK:      "communication_per_rank_per_step": {
// CHECK-NEXT:   "elements": 51,
// CHECK-NEXT:   "bytes": 204,
// CHECK:      "collectives": [
// CHECK-NEXT:   {"op":"all_reduce","elements":32,"bytes":128,"tensors":1,"payload_elements":24,"buffer_elements":24,"ranks":3,"async":false},
// CHECK-NEXT:   {"op":"all_reduce","elements":0,"bytes":0,"tensors":1,"payload_elements":24,"buffer_elements":24,"ranks":1,"async":false},
// CHECK-NEXT:   {"op":"all_gather","elements":19,"bytes":76,"tensors":1,"payload_elements":23,"buffer_elements":24,"ranks":6,"async":false}
// CHECK-NEXT: ]

module {
  shard.grid @g(shape = 2x3)
  train.param @p : tensor<6x4xf32> init = zeros
  func.func @step(%x: tensor<6x4xf32>, %y: tensor<4xf32>) -> (tensor<6x4xf32>, tensor<23xf32>) attributes {train.step} {
    %a = train.scale %x by 2.0 : tensor<6x4xf32>
    %r = train.reshape %a : tensor<6x4xf32> -> tensor<24xf32>
    %s = shard.all_reduce %r on @g grid_axes = [1] : tensor<24xf32> -> tensor<24xf32>
    %t = shard.all_reduce %s on @g : tensor<24xf32> -> tensor<24xf32>
    %gath = shard.all_gather %y on @g grid_axes = [0, 1] gather_axis = 0 : tensor<4xf32> -> tensor<24xf32>
    %u = train.unpack %gath shards = 6 : tensor<24xf32> -> tensor<23xf32>
    %back = train.reshape %t : tensor<24xf32> -> tensor<6x4xf32>
    return %back, %u : tensor<6x4xf32>, tensor<23xf32>
  }
}
