// Defaults and upstream collectives: no train.world_size / train.zero_stage
// (1 rank, stage 0); train.reshape and shard.all_slice are views that keep
// their source alive; a train.unpack with shards > 1 copies (gathered
// parameters out of an all-gather, activations otherwise) and ends its
// input's life; shard.* collectives size their ring from the grid axes they
// run over.
//
// RUN: zeroc %s --no-pipeline --emit=memory-report | FileCheck %s

// Ψ = 24 f32, not sharded: 96 bytes. Liveness (op index: bytes [def, end]):
//   0 %a    96 A [0, 8]  (through its reshape %r: last used by the unpack
//                        %v at 8, which copies it)
//   2 %s    96 B [2, 9]  (through its slice %sl, a view, returned at 9)
//   3 %t    96 B [3, 9]  (through its reshape %back, returned at 9)
//   4 %gath 96 G [4, 5]  (dies at its unpack %u, which copies it)
//   5 %u    92 G [5, 9]  (23 f32 unpacked from an all-gather: gathered)
//   8 %v    88 A [8, 9]  (22 f32 unpacked from %r: not gathered)
// Peaks: A 96 + 88 = 184 (at 8); B 96 + 96 = 192 (from 3 on); G 96 + 92 =
// 188 (at 5). Combined: at 5, 96 (A) + 192 (B) + 188 (G) = 476; at 8 only
// 184 + 192 + 92 = 468.
// Traffic (shard.all_slice sends nothing):
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
// CHECK-NEXT:   "gathered_parameters": 188,
// CHECK-NEXT:   "gradient_buckets": 192,
// CHECK-NEXT:   "activations": 184,
// CHECK-NEXT:   "peak": 476
// CHECK-NEXT: },
// CHECK-NEXT: "peak_bytes_per_rank": 572,
// CHECK-NEXT: "communication_per_rank_per_step": {
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
  func.func @step(%x: tensor<6x4xf32>, %y: tensor<4xf32>) -> (tensor<6x4xf32>, tensor<23xf32>, tensor<12xf32>, tensor<22xf32>) attributes {train.step} {
    %a = train.scale %x by 2.0 : tensor<6x4xf32>
    %r = train.reshape %a : tensor<6x4xf32> -> tensor<24xf32>
    %s = shard.all_reduce %r on @g grid_axes = [1] : tensor<24xf32> -> tensor<24xf32>
    %t = shard.all_reduce %s on @g : tensor<24xf32> -> tensor<24xf32>
    %gath = shard.all_gather %y on @g grid_axes = [0, 1] gather_axis = 0 : tensor<4xf32> -> tensor<24xf32>
    %u = train.unpack %gath shards = 6 : tensor<24xf32> -> tensor<23xf32>
    %back = train.reshape %t : tensor<24xf32> -> tensor<6x4xf32>
    %sl = shard.all_slice %s on @g grid_axes = [0] slice_axis = 0 : tensor<24xf32> -> tensor<12xf32>
    %v = train.unpack %r shards = 3 : tensor<24xf32> -> tensor<22xf32>
    return %back, %u, %sl, %v : tensor<6x4xf32>, tensor<23xf32>, tensor<12xf32>, tensor<22xf32>
  }
}
