// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Round-trip of the ops of Llama-class models (TrainLlamaOps.td) and of
// grouped-query attention, with each piece of optional syntax.

// CHECK-LABEL: func.func @rmsnorm
// CHECK-NEXT:    %[[Y:.+]] = train.rmsnorm %arg0, %arg1 eps = 1.000000e-05 : (tensor<2x5x6xf32>, tensor<6xf32>) -> tensor<2x5x6xf32>
// CHECK-NEXT:    %{{.+}}, %{{.+}} = train.rmsnorm_grad %[[Y]], %arg0, %arg1 eps = 1.000000e-05 : (tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<6xf32>) -> (tensor<2x5x6xf32>, tensor<6xf32>)
// CHECK-NEXT:    train.rmsnorm %arg2, %arg3 eps = 9.9999999999999995E-7 : (tensor<3x4xbf16>, tensor<4xbf16>) -> tensor<3x4xbf16>
func.func @rmsnorm(%x: tensor<2x5x6xf32>, %w: tensor<6xf32>, %xb: tensor<3x4xbf16>, %wb: tensor<4xbf16>) {
  %y = train.rmsnorm %x, %w eps = 1.0e-5 : (tensor<2x5x6xf32>, tensor<6xf32>) -> tensor<2x5x6xf32>
  %dx, %dw = train.rmsnorm_grad %y, %x, %w eps = 1.0e-5 : (tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<6xf32>) -> (tensor<2x5x6xf32>, tensor<6xf32>)
  %yb = train.rmsnorm %xb, %wb eps = 1.0e-6 : (tensor<3x4xbf16>, tensor<4xbf16>) -> tensor<3x4xbf16>
  return
}

// CHECK-LABEL: func.func @silu
// CHECK-NEXT:    %[[S:.+]] = train.silu %arg0 : tensor<2x7xf32>
// CHECK-NEXT:    train.silu_grad %[[S]], %arg0 : tensor<2x7xf32>
func.func @silu(%x: tensor<2x7xf32>) {
  %s = train.silu %x : tensor<2x7xf32>
  %d = train.silu_grad %s, %x : tensor<2x7xf32>
  return
}

// CHECK-LABEL: func.func @rope
// CHECK-NEXT:    train.rope %arg0 theta = 5.000000e+05 seq_dim = 2 rotate_half : tensor<2x4x5x6xf32>
// CHECK-NEXT:    train.rope %arg0 theta = 1.000000e+04 seq_dim = 1 interleaved inverse : tensor<2x4x5x6xf32>
// CHECK-NEXT:    train.rope %arg1 theta = 1.000000e+04 seq_dim = 0 interleaved : tensor<5x2xbf16>
// CHECK-NEXT:    train.rope %arg0 theta = 5.000000e+05 seq_dim = 2 rotate_half scaling = [3.200000e+01, 1.000000e+00, 4.000000e+00, 8.192000e+03] : tensor<2x4x5x6xf32>
// CHECK-NEXT:    train.rope %arg0 theta = 1.000000e+04 seq_dim = 1 rotate_half inverse scaling = [2.000000e+00] : tensor<2x4x5x6xf32>
func.func @rope(%x: tensor<2x4x5x6xf32>, %y: tensor<5x2xbf16>) {
  %a = train.rope %x theta = 500000.0 seq_dim = 2 rotate_half : tensor<2x4x5x6xf32>
  %b = train.rope %x theta = 10000.0 seq_dim = 1 interleaved inverse : tensor<2x4x5x6xf32>
  %c = train.rope %y theta = 10000.0 seq_dim = 0 interleaved : tensor<5x2xbf16>
  %d = train.rope %x theta = 500000.0 seq_dim = 2 rotate_half scaling = [32.0, 1.0, 4.0, 8192.0] : tensor<2x4x5x6xf32>
  %e = train.rope %x theta = 10000.0 seq_dim = 1 rotate_half inverse scaling = [2.0] : tensor<2x4x5x6xf32>
  return
}

// CHECK-LABEL: func.func @slice
// CHECK-NEXT:    %[[P:.+]] = train.slice %arg0 offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x32x48xf32> -> tensor<1x17x48xf32>
// CHECK-NEXT:    train.slice %arg0 offsets = [0, 3, 1] strides = [1, 2, 5] : tensor<1x32x48xf32> -> tensor<1x15x10xf32>
// CHECK-NEXT:    train.slice_grad %[[P]] offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x17x48xf32> -> tensor<1x32x48xf32>
// CHECK-NEXT:    train.slice %arg0 offsets = [0, 31, 47] strides = [1, 1, 1] : tensor<1x32x48xf32> -> tensor<1x1x1xf32>
func.func @slice(%x: tensor<1x32x48xf32>) {
  %p = train.slice %x offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x32x48xf32> -> tensor<1x17x48xf32>
  %q = train.slice %x offsets = [0, 3, 1] strides = [1, 2, 5] : tensor<1x32x48xf32> -> tensor<1x15x10xf32>
  %d = train.slice_grad %p offsets = [0, 0, 0] strides = [1, 1, 1] : tensor<1x17x48xf32> -> tensor<1x32x48xf32>
  %corner = train.slice %x offsets = [0, 31, 47] strides = [1, 1, 1] : tensor<1x32x48xf32> -> tensor<1x1x1xf32>
  return
}

// CHECK-LABEL: func.func @dropout
// CHECK-NEXT:    train.dropout %arg0 p = 1.000000e-01 seed = 3 : tensor<8x16xf32>
// CHECK-NEXT:    train.dropout %arg0, %arg1 p = 1.000000e-01 seed = 3 : tensor<8x16xf32>
// CHECK-NEXT:    train.dropout %arg0, %arg1 p = 0.000000e+00 seed = 0 batch_dim = 0 ranks = 2 : tensor<8x16xf32>
// CHECK-NEXT:    train.dropout %arg0, %arg1 p = 1.000000e-01 seed = 0 batch_dim = 0 ranks = 2 micro_batch = 3 micro_batches = 4 : tensor<8x16xf32>
func.func @dropout(%x: tensor<8x16xf32>, %step: tensor<i64>) {
  %a = train.dropout %x p = 0.1 seed = 3 : tensor<8x16xf32>
  %b = train.dropout %x, %step p = 0.1 seed = 3 : tensor<8x16xf32>
  %c = train.dropout %x, %step p = 0.0 seed = 0 batch_dim = 0 ranks = 2 : tensor<8x16xf32>
  %d = train.dropout %x, %step p = 0.1 seed = 0 batch_dim = 0 ranks = 2 micro_batch = 3 micro_batches = 4 : tensor<8x16xf32>
  return
}

// Grouped-query attention: 4 query heads share 2 key/value heads.
// CHECK-LABEL: func.func @gqa
// CHECK-NEXT:    %[[A:.+]] = train.attention %arg0, %arg1, %arg2 causal scale = 2.500000e-01 : (tensor<2x4x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x5x8xf32>
// CHECK-NEXT:    train.attention_grad %[[A]], %arg0, %arg1, %arg2 causal scale = 2.500000e-01 : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>)
// CHECK-NEXT:    train.attention %arg0, %arg3, %arg3 scale = 2.500000e-01 : (tensor<2x4x5x8xf32>, tensor<2x1x7x8xf32>, tensor<2x1x7x8xf32>) -> tensor<2x4x5x8xf32>
func.func @gqa(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x8xf32>, %kv1: tensor<2x1x7x8xf32>) {
  %a = train.attention %q, %k, %v causal scale = 0.25 : (tensor<2x4x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x5x8xf32>
  %dq, %dk, %dv = train.attention_grad %a, %q, %k, %v causal scale = 0.25 : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>)
  %m = train.attention %q, %kv1, %kv1 scale = 0.25 : (tensor<2x4x5x8xf32>, tensor<2x1x7x8xf32>, tensor<2x1x7x8xf32>) -> tensor<2x4x5x8xf32>
  return
}

// Token ids slice too (train-accumulate's micro-batches).
// CHECK-LABEL: func.func @slice_tokens
// CHECK-NEXT:    train.slice %arg0 offsets = [2, 0] strides = [1, 1] {train.micro_batch = 1 : i64} : tensor<4x7xi32> -> tensor<2x7xi32>
func.func @slice_tokens(%t: tensor<4x7xi32>) {
  %0 = train.slice %t offsets = [2, 0] strides = [1, 1] {train.micro_batch = 1 : i64} : tensor<4x7xi32> -> tensor<2x7xi32>
  return
}
