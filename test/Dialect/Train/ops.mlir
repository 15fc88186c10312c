// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Round-trip of every op of the train dialect, with each piece of optional
// syntax. A module holds one optimizer, so each optimizer configuration
// lives in a nested module of its own.

//===----------------------------------------------------------------------===//
// train.optimizer
//===----------------------------------------------------------------------===//

// CHECK-LABEL: module @sgd_minimal {
// CHECK-NEXT:    train.optimizer sgd lr = 1.000000e-01{{$}}
// CHECK-NEXT:  }
module @sgd_minimal {
  train.optimizer sgd lr = 0.1
}

// CHECK-LABEL: module @sgd_all_keys {
// CHECK-NEXT:    train.optimizer sgd lr = 5.000000e-02 momentum = 9.000000e-01 weight_decay = 1.000000e-04 grad_clip = 5.000000e+00 schedule = cosine warmup = 100 min_lr = 1.000000e-03 max_steps = 5000{{$}}
// CHECK-NEXT:  }
module @sgd_all_keys {
  train.optimizer sgd lr = 0.05 momentum = 0.9 weight_decay = 1.0e-4 grad_clip = 5.0 schedule = cosine warmup = 100 min_lr = 0.001 max_steps = 5000
}

// A momentum of 0 is present, hence printed.
// CHECK-LABEL: module @sgd_zero_momentum {
// CHECK-NEXT:    train.optimizer sgd lr = 1.000000e+00 momentum = 0.000000e+00{{$}}
module @sgd_zero_momentum {
  train.optimizer sgd lr = 1.0 momentum = 0.0
}

// CHECK-LABEL: module @adamw_minimal {
// CHECK-NEXT:    train.optimizer adamw lr = 3.000000e-04 beta1 = 9.000000e-01 beta2 = 0.99899999999999999 eps = 1.000000e-08{{$}}
module @adamw_minimal {
  train.optimizer adamw lr = 3.0e-4 beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8
}

// nanoGPT's configuration: every optional key, cosine schedule.
// CHECK-LABEL: module @adamw_cosine_all_keys {
// CHECK-NEXT:    train.optimizer adamw lr = 6.000000e-04 beta1 = 9.000000e-01 beta2 = 0.94999999999999996 eps = 1.000000e-08 weight_decay = 1.000000e-01 grad_clip = 1.000000e+00 schedule = cosine warmup = 10 min_lr = 6.000000e-05 max_steps = 1000{{$}}
module @adamw_cosine_all_keys {
  train.optimizer adamw lr = 6.0e-4 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 weight_decay = 0.1 grad_clip = 1.0 schedule = cosine warmup = 10 min_lr = 6.0e-5 max_steps = 1000
}

// Keys spelled out at their default values are elided when printed; the
// boundary values beta1 = 0 and min_lr = 0 are accepted.
// CHECK-LABEL: module @adamw_explicit_defaults {
// CHECK-NEXT:    train.optimizer adamw lr = 1.000000e-03 beta1 = 0.000000e+00 beta2 = 5.000000e-01 eps = 1.000000e+00{{$}}
module @adamw_explicit_defaults {
  train.optimizer adamw lr = 1.0e-3 beta1 = 0.0 beta2 = 0.5 eps = 1.0 weight_decay = 0.0 grad_clip = 0.0 schedule = constant warmup = 0 min_lr = 0.0
}

// Cosine without warmup, min_lr = lr (allowed) and the smallest legal
// max_steps (warmup + 1). A discardable attribute rides along in the
// attribute dictionary.
// CHECK-LABEL: module @adamw_cosine_min_lr_eq_lr {
// CHECK-NEXT:    train.optimizer adamw lr = 2.500000e-01 beta1 = 5.000000e-01 beta2 = 7.500000e-01 eps = 1.250000e-01 schedule = cosine min_lr = 2.500000e-01 max_steps = 1 {note = "tag"}{{$}}
module @adamw_cosine_min_lr_eq_lr {
  train.optimizer adamw lr = 0.25 beta1 = 0.5 beta2 = 0.75 eps = 0.125 schedule = cosine min_lr = 0.25 max_steps = 1 {note = "tag"}
}

//===----------------------------------------------------------------------===//
// train.param and train.read
//===----------------------------------------------------------------------===//

// CHECK-LABEL: module @params {
// CHECK-NEXT:    train.param @zeros : tensor<48xf32> init = zeros{{$}}
// CHECK-NEXT:    train.param @ones : tensor<48xf32> init = ones{{$}}
// CHECK-NEXT:    train.param @normal : tensor<65x48xf32> init = normal std = 2.000000e-02{{$}}
// CHECK-NEXT:    train.param @normal.decay : tensor<144x48xf32> init = normal std = 1.000000e-02 decay{{$}}
// CHECK-NEXT:    train.param @zeros.decay : tensor<4x4xf32> init = zeros decay{{$}}
// CHECK-NEXT:    train.param @ones.decay : tensor<4xf32> init = ones decay{{$}}
// CHECK-NEXT:    train.param @bf16 : tensor<17x48xbf16> init = normal std = 5.000000e-01 decay{{$}}
// CHECK-NEXT:    train.param @scalar : tensor<f32> init = ones{{$}}
// CHECK-NEXT:    train.param @"quoted name" : tensor<2x3x4xbf16> init = zeros {note = 1 : i64}{{$}}
// CHECK-NEXT:    func.func @read() -> (tensor<65x48xf32>, tensor<17x48xbf16>, tensor<f32>) {
// CHECK-NEXT:      %[[A:[a-z0-9_]+]] = train.read @normal : tensor<65x48xf32>{{$}}
// CHECK-NEXT:      %[[B:[a-z0-9_]+]] = train.read @bf16 : tensor<17x48xbf16>{{$}}
// CHECK-NEXT:      %[[C:[a-z0-9_]+]] = train.read @scalar {note} : tensor<f32>{{$}}
// CHECK-NEXT:      return %[[A]], %[[B]], %[[C]] : tensor<65x48xf32>, tensor<17x48xbf16>, tensor<f32>
module @params {
  train.param @zeros : tensor<48xf32> init = zeros
  train.param @ones : tensor<48xf32> init = ones
  train.param @normal : tensor<65x48xf32> init = normal std = 0.02
  train.param @normal.decay : tensor<144x48xf32> init = normal std = 0.01 decay
  train.param @zeros.decay : tensor<4x4xf32> init = zeros decay
  train.param @ones.decay : tensor<4xf32> init = ones decay
  train.param @bf16 : tensor<17x48xbf16> init = normal std = 0.5 decay
  train.param @scalar : tensor<f32> init = ones
  train.param @"quoted name" : tensor<2x3x4xbf16> init = zeros {note = 1}
  func.func @read() -> (tensor<65x48xf32>, tensor<17x48xbf16>, tensor<f32>) {
    %a = train.read @normal : tensor<65x48xf32>
    %b = train.read @bf16 : tensor<17x48xbf16>
    %c = train.read @scalar {note} : tensor<f32>
    return %a, %b, %c : tensor<65x48xf32>, tensor<17x48xbf16>, tensor<f32>
  }
}

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:      %[[T:[a-z0-9_]+]]: tensor<65x48xf32>, %[[I32:[a-z0-9_]+]]: tensor<12x17xi32>, %[[B:[a-z0-9_]+]]: tensor<10x8xbf16>, %[[I64:[a-z0-9_]+]]: tensor<5xi64>, %[[I0:[a-z0-9_]+]]: tensor<i32>)
// CHECK-NEXT:    train.embedding %[[T]][%[[I32]]] : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.embedding %[[B]][%[[I64]]] : (tensor<10x8xbf16>, tensor<5xi64>) -> tensor<5x8xbf16>{{$}}
// CHECK-NEXT:    train.embedding %[[T]][%[[I0]]] : (tensor<65x48xf32>, tensor<i32>) -> tensor<48xf32>{{$}}
func.func @embedding(%table: tensor<65x48xf32>, %ids: tensor<12x17xi32>, %btable: tensor<10x8xbf16>, %lids: tensor<5xi64>, %id: tensor<i32>) {
  %0 = train.embedding %table[%ids] : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>
  %1 = train.embedding %btable[%lids] : (tensor<10x8xbf16>, tensor<5xi64>) -> tensor<5x8xbf16>
  %2 = train.embedding %table[%id] : (tensor<65x48xf32>, tensor<i32>) -> tensor<48xf32>
  return
}

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:[a-z0-9_]+]]: tensor<4x8xf32>, %[[AT:[a-z0-9_]+]]: tensor<8x4xf32>, %[[B:[a-z0-9_]+]]: tensor<8x16xf32>, %[[BT:[a-z0-9_]+]]: tensor<16x8xf32>,
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<2x3x4x8xf32>, %[[Y:[a-z0-9_]+]]: tensor<2x3x8x5xf32>, %[[W:[a-z0-9_]+]]: tensor<5x8xf32>, %[[XT:[a-z0-9_]+]]: tensor<2x8x4xf32>, %[[YT:[a-z0-9_]+]]: tensor<2x5x8xf32>,
// CHECK-SAME:      %[[P:[a-z0-9_]+]]: tensor<12x17x48xbf16>, %[[Q:[a-z0-9_]+]]: tensor<144x48xbf16>)
// CHECK-NEXT:    train.matmul %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>{{$}}
// CHECK-NEXT:    train.matmul %[[AT]], %[[B]] transpose_lhs : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>{{$}}
// CHECK-NEXT:    train.matmul %[[A]], %[[BT]] transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>{{$}}
// CHECK-NEXT:    train.matmul %[[AT]], %[[BT]] transpose_lhs transpose_rhs : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>{{$}}
// CHECK-NEXT:    train.matmul %[[X]], %[[Y]] : (tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>{{$}}
// CHECK-NEXT:    train.matmul %[[X]], %[[W]] transpose_rhs : (tensor<2x3x4x8xf32>, tensor<5x8xf32>) -> tensor<2x3x4x5xf32>{{$}}
// CHECK-NEXT:    train.matmul %[[XT]], %[[YT]] transpose_lhs transpose_rhs : (tensor<2x8x4xf32>, tensor<2x5x8xf32>) -> tensor<2x4x5xf32>{{$}}
// CHECK-NEXT:    train.matmul %[[P]], %[[Q]] transpose_rhs {note} : (tensor<12x17x48xbf16>, tensor<144x48xbf16>) -> tensor<12x17x144xbf16>{{$}}
func.func @matmul(%a: tensor<4x8xf32>, %at: tensor<8x4xf32>, %b: tensor<8x16xf32>, %bt: tensor<16x8xf32>,
                  %x: tensor<2x3x4x8xf32>, %y: tensor<2x3x8x5xf32>, %w: tensor<5x8xf32>, %xt: tensor<2x8x4xf32>, %yt: tensor<2x5x8xf32>,
                  %p: tensor<12x17x48xbf16>, %q: tensor<144x48xbf16>) {
  %0 = train.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = train.matmul %at, %b transpose_lhs : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %2 = train.matmul %a, %bt transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %3 = train.matmul %at, %bt transpose_lhs transpose_rhs : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // Batched rhs, then a rank-2 rhs shared by every batch element.
  %4 = train.matmul %x, %y : (tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
  %5 = train.matmul %x, %w transpose_rhs : (tensor<2x3x4x8xf32>, tensor<5x8xf32>) -> tensor<2x3x4x5xf32>
  %6 = train.matmul %xt, %yt transpose_lhs transpose_rhs : (tensor<2x8x4xf32>, tensor<2x5x8xf32>) -> tensor<2x4x5xf32>
  %7 = train.matmul %p, %q transpose_rhs {note} : (tensor<12x17x48xbf16>, tensor<144x48xbf16>) -> tensor<12x17x144xbf16>
  return
}

// CHECK-LABEL: func.func @broadcast_binary(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<12x17x48xf32>, %[[ROW:[a-z0-9_]+]]: tensor<48xf32>, %[[POS:[a-z0-9_]+]]: tensor<17x48xf32>, %[[U:[a-z0-9_]+]]: tensor<4x1x3xf32>,
// CHECK-SAME:      %[[V:[a-z0-9_]+]]: tensor<5x1xf32>, %[[C:[a-z0-9_]+]]: tensor<1x4xf32>, %[[R:[a-z0-9_]+]]: tensor<3x1xf32>, %[[S:[a-z0-9_]+]]: tensor<f32>, %[[H:[a-z0-9_]+]]: tensor<2x3xbf16>, %[[HS:[a-z0-9_]+]]: tensor<1xbf16>)
// CHECK-NEXT:    train.add %[[X]], %[[X]] : (tensor<12x17x48xf32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.add %[[X]], %[[ROW]] : (tensor<12x17x48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.add %[[POS]], %[[X]] : (tensor<17x48xf32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.add %[[U]], %[[V]] : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>{{$}}
// CHECK-NEXT:    train.sub %[[C]], %[[R]] : (tensor<1x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>{{$}}
// CHECK-NEXT:    train.mul %[[S]], %[[X]] : (tensor<f32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.div %[[X]], %[[S]] : (tensor<12x17x48xf32>, tensor<f32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.div %[[S]], %[[S]] : (tensor<f32>, tensor<f32>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.mul %[[H]], %[[HS]] {note} : (tensor<2x3xbf16>, tensor<1xbf16>) -> tensor<2x3xbf16>{{$}}
// CHECK-NEXT:    train.sub %[[HS]], %[[H]] : (tensor<1xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>{{$}}
func.func @broadcast_binary(%x: tensor<12x17x48xf32>, %row: tensor<48xf32>, %pos: tensor<17x48xf32>, %u: tensor<4x1x3xf32>,
                            %v: tensor<5x1xf32>, %c: tensor<1x4xf32>, %r: tensor<3x1xf32>, %s: tensor<f32>, %h: tensor<2x3xbf16>, %hs: tensor<1xbf16>) {
  %0 = train.add %x, %x : (tensor<12x17x48xf32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>
  // Rank-mismatched operands: a missing leading dimension counts as 1.
  %1 = train.add %x, %row : (tensor<12x17x48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
  %2 = train.add %pos, %x : (tensor<17x48xf32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>
  // Size-1 dimensions stretch on both sides.
  %3 = train.add %u, %v : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
  %4 = train.sub %c, %r : (tensor<1x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  // Rank-0 operands.
  %5 = train.mul %s, %x : (tensor<f32>, tensor<12x17x48xf32>) -> tensor<12x17x48xf32>
  %6 = train.div %x, %s : (tensor<12x17x48xf32>, tensor<f32>) -> tensor<12x17x48xf32>
  %7 = train.div %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %8 = train.mul %h, %hs {note} : (tensor<2x3xbf16>, tensor<1xbf16>) -> tensor<2x3xbf16>
  %9 = train.sub %hs, %h : (tensor<1xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return
}

// CHECK-LABEL: func.func @unary(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<12x17x192xf32>, %[[H:[a-z0-9_]+]]: tensor<4x8xbf16>, %[[S:[a-z0-9_]+]]: tensor<f32>)
// CHECK-NEXT:    train.scale %[[X]] by 2.500000e-01 : tensor<12x17x192xf32>{{$}}
// CHECK-NEXT:    train.scale %[[H]] by -3.000000e+00 {note} : tensor<4x8xbf16>{{$}}
// CHECK-NEXT:    train.scale %[[S]] by 0.000000e+00 : tensor<f32>{{$}}
// CHECK-NEXT:    train.gelu %[[X]] tanh : tensor<12x17x192xf32>{{$}}
// CHECK-NEXT:    train.gelu %[[H]] erf : tensor<4x8xbf16>{{$}}
// CHECK-NEXT:    train.relu %[[X]] : tensor<12x17x192xf32>{{$}}
// CHECK-NEXT:    train.relu %[[S]] {note} : tensor<f32>{{$}}
func.func @unary(%x: tensor<12x17x192xf32>, %h: tensor<4x8xbf16>, %s: tensor<f32>) {
  %0 = train.scale %x by 0.25 : tensor<12x17x192xf32>
  %1 = train.scale %h by -3.0 {note} : tensor<4x8xbf16>
  %2 = train.scale %s by 0.0 : tensor<f32>
  %3 = train.gelu %x tanh : tensor<12x17x192xf32>
  %4 = train.gelu %h erf : tensor<4x8xbf16>
  %5 = train.relu %x : tensor<12x17x192xf32>
  %6 = train.relu %s {note} : tensor<f32>
  return
}

// CHECK-LABEL: func.func @normalization(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<12x17x48xf32>, %[[W:[a-z0-9_]+]]: tensor<48xf32>, %[[B:[a-z0-9_]+]]: tensor<48xf32>, %[[V:[a-z0-9_]+]]: tensor<8xbf16>, %[[VW:[a-z0-9_]+]]: tensor<8xbf16>, %[[S:[a-z0-9_]+]]: tensor<12x3x17x17xf32>, %[[M:[a-z0-9_]+]]: tensor<5x7xbf16>)
// CHECK-NEXT:    train.layernorm %[[X]], %[[W]], %[[B]] eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.layernorm %[[V]], %[[VW]], %[[VW]] eps = 1.000000e+00 {note} : (tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<8xbf16>{{$}}
// CHECK-NEXT:    train.softmax %[[S]] : tensor<12x3x17x17xf32>{{$}}
// CHECK-NEXT:    train.softmax %[[V]] : tensor<8xbf16>{{$}}
// CHECK-NEXT:    train.causal_mask %[[S]] : tensor<12x3x17x17xf32>{{$}}
// CHECK-NEXT:    train.causal_mask %[[M]] : tensor<5x7xbf16>{{$}}
func.func @normalization(%x: tensor<12x17x48xf32>, %w: tensor<48xf32>, %b: tensor<48xf32>, %v: tensor<8xbf16>, %vw: tensor<8xbf16>, %s: tensor<12x3x17x17xf32>, %m: tensor<5x7xbf16>) {
  %0 = train.layernorm %x, %w, %b eps = 1.0e-5 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
  %1 = train.layernorm %v, %vw, %vw eps = 1.0 {note} : (tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<8xbf16>
  %2 = train.softmax %s : tensor<12x3x17x17xf32>
  %3 = train.softmax %v : tensor<8xbf16>
  %4 = train.causal_mask %s : tensor<12x3x17x17xf32>
  // Not square: more keys than queries.
  %5 = train.causal_mask %m : tensor<5x7xbf16>
  return
}

// CHECK-LABEL: func.func @attention(
// CHECK-SAME:      %[[Q:[a-z0-9_]+]]: tensor<12x3x17x16xf32>, %[[K:[a-z0-9_]+]]: tensor<12x3x17x16xf32>, %[[V:[a-z0-9_]+]]: tensor<12x3x17x16xf32>, %[[Q5:[a-z0-9_]+]]: tensor<2x4x5x8xbf16>, %[[KV7:[a-z0-9_]+]]: tensor<2x4x7x8xbf16>)
// CHECK-NEXT:    train.attention %[[Q]], %[[K]], %[[V]] causal scale = 2.500000e-01 : (tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x3x17x16xf32>{{$}}
// CHECK-NEXT:    train.attention %[[Q]], %[[K]], %[[V]] scale = 1.250000e-01 : (tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x3x17x16xf32>{{$}}
// CHECK-NEXT:    train.attention %[[Q5]], %[[KV7]], %[[KV7]] scale = 3.500000e-01 {note} : (tensor<2x4x5x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>) -> tensor<2x4x5x8xbf16>{{$}}
func.func @attention(%q: tensor<12x3x17x16xf32>, %k: tensor<12x3x17x16xf32>, %v: tensor<12x3x17x16xf32>, %q5: tensor<2x4x5x8xbf16>, %kv7: tensor<2x4x7x8xbf16>) {
  %0 = train.attention %q, %k, %v causal scale = 0.25 : (tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x3x17x16xf32>
  %1 = train.attention %q, %k, %v scale = 0.125 : (tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x3x17x16xf32>
  // Without causal, queries and keys may differ in number.
  %2 = train.attention %q5, %kv7, %kv7 scale = 0.35 {note} : (tensor<2x4x5x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>) -> tensor<2x4x5x8xbf16>
  return
}

// The dropout of the probabilities: without a step (evaluation), with one,
// with the batch split train-data-parallel records and the micro-batch
// train-accumulate records; and attention_grad's.
// CHECK-LABEL: func.func @attention_dropout(
// CHECK-SAME:      %[[Q:[a-z0-9_]+]]: tensor<2x3x5x4xf32>, %[[STEP:[a-z0-9_]+]]: tensor<i64>)
// CHECK-NEXT:    train.attention %[[Q]], %[[Q]], %[[Q]] causal scale = 5.000000e-01 dropout = 1.000000e-01 seed = 3 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>{{$}}
// CHECK-NEXT:    train.attention %[[Q]], %[[Q]], %[[Q]], %[[STEP]] scale = 5.000000e-01 dropout = 2.500000e-01 seed = 0 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<i64>) -> tensor<2x3x5x4xf32>{{$}}
// CHECK-NEXT:    train.attention %[[Q]], %[[Q]], %[[Q]], %[[STEP]] causal scale = 5.000000e-01 dropout = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 micro_batch = 1 micro_batches = 4 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<i64>) -> tensor<2x3x5x4xf32>{{$}}
// CHECK-NEXT:    train.attention_grad %[[Q]], %[[Q]], %[[Q]], %[[Q]], %[[STEP]] causal scale = 5.000000e-01 dropout = 1.000000e-01 seed = 3 batch_dim = 0 ranks = 2 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<i64>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>){{$}}
func.func @attention_dropout(%q: tensor<2x3x5x4xf32>, %step: tensor<i64>) {
  %0 = train.attention %q, %q, %q causal scale = 0.5 dropout = 0.1 seed = 3 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  %1 = train.attention %q, %q, %q, %step scale = 0.5 dropout = 0.25 seed = 0 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<i64>) -> tensor<2x3x5x4xf32>
  %2 = train.attention %q, %q, %q, %step causal scale = 0.5 dropout = 0.1 seed = 3 batch_dim = 0 ranks = 2 micro_batch = 1 micro_batches = 4 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<i64>) -> tensor<2x3x5x4xf32>
  %3:3 = train.attention_grad %q, %q, %q, %q, %step causal scale = 0.5 dropout = 0.1 seed = 3 batch_dim = 0 ranks = 2 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<i64>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>)
  return
}

// CHECK-LABEL: func.func @reshape_transpose(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<12x17x48xf32>, %[[H:[a-z0-9_]+]]: tensor<12x17x3x16xbf16>, %[[I:[a-z0-9_]+]]: tensor<12x17xi32>, %[[ONE:[a-z0-9_]+]]: tensor<1x1xf32>, %[[M:[a-z0-9_]+]]: tensor<3x4xf32>)
// CHECK-NEXT:    train.reshape %[[X]] : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>{{$}}
// CHECK-NEXT:    train.reshape %[[H]] : tensor<12x17x3x16xbf16> -> tensor<204x48xbf16>{{$}}
// CHECK-NEXT:    train.reshape %[[I]] : tensor<12x17xi32> -> tensor<204xi32>{{$}}
// CHECK-NEXT:    train.reshape %[[ONE]] {note} : tensor<1x1xf32> -> tensor<f32>{{$}}
// CHECK-NEXT:    train.transpose %[[H]] [0, 2, 1, 3] : tensor<12x17x3x16xbf16> -> tensor<12x3x17x16xbf16>{{$}}
// CHECK-NEXT:    train.transpose %[[M]] [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>{{$}}
// CHECK-NEXT:    train.transpose %[[M]] [0, 1] {note} : tensor<3x4xf32> -> tensor<3x4xf32>{{$}}
// CHECK-NEXT:    train.transpose %[[X]] [2, 0, 1] : tensor<12x17x48xf32> -> tensor<48x12x17xf32>{{$}}
func.func @reshape_transpose(%x: tensor<12x17x48xf32>, %h: tensor<12x17x3x16xbf16>, %i: tensor<12x17xi32>, %one: tensor<1x1xf32>, %m: tensor<3x4xf32>) {
  %0 = train.reshape %x : tensor<12x17x48xf32> -> tensor<12x17x3x16xf32>
  %1 = train.reshape %h : tensor<12x17x3x16xbf16> -> tensor<204x48xbf16>
  // Reshape takes any element type, token ids included.
  %2 = train.reshape %i : tensor<12x17xi32> -> tensor<204xi32>
  %3 = train.reshape %one {note} : tensor<1x1xf32> -> tensor<f32>
  %4 = train.transpose %h [0, 2, 1, 3] : tensor<12x17x3x16xbf16> -> tensor<12x3x17x16xbf16>
  %5 = train.transpose %m [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
  %6 = train.transpose %m [0, 1] {note} : tensor<3x4xf32> -> tensor<3x4xf32>
  %7 = train.transpose %x [2, 0, 1] : tensor<12x17x48xf32> -> tensor<48x12x17xf32>
  return
}

// CHECK-LABEL: func.func @split_concat(
// CHECK-SAME:      %[[QKV:[a-z0-9_]+]]: tensor<12x17x144xf32>, %[[A:[a-z0-9_]+]]: tensor<4x2xbf16>, %[[B:[a-z0-9_]+]]: tensor<4x3xbf16>, %[[R:[a-z0-9_]+]]: tensor<6x5xf32>)
// CHECK-NEXT:    %[[S:[a-z0-9_]+]]:3 = train.split %[[QKV]] dim = 2 : tensor<12x17x144xf32> -> tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    %[[R2:[a-z0-9_]+]]:2 = train.split %[[R]] dim = 0 {note} : tensor<6x5xf32> -> tensor<3x5xf32>, tensor<3x5xf32>{{$}}
// CHECK-NEXT:    %[[ONE:[a-z0-9_]+]] = train.split %[[R]] dim = 1 : tensor<6x5xf32> -> tensor<6x5xf32>{{$}}
// CHECK-NEXT:    train.concat %[[S]]#0, %[[S]]#1, %[[S]]#2 dim = 2 : tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32> -> tensor<12x17x144xf32>{{$}}
// CHECK-NEXT:    train.concat %[[A]], %[[B]], %[[A]] dim = 1 {note} : tensor<4x2xbf16>, tensor<4x3xbf16>, tensor<4x2xbf16> -> tensor<4x7xbf16>{{$}}
// CHECK-NEXT:    train.concat %[[R2]]#1, %[[R2]]#0 dim = 0 : tensor<3x5xf32>, tensor<3x5xf32> -> tensor<6x5xf32>{{$}}
// CHECK-NEXT:    train.concat %[[ONE]] dim = 0 : tensor<6x5xf32> -> tensor<6x5xf32>{{$}}
func.func @split_concat(%qkv: tensor<12x17x144xf32>, %a: tensor<4x2xbf16>, %b: tensor<4x3xbf16>, %r: tensor<6x5xf32>) {
  %q, %k, %v = train.split %qkv dim = 2 : tensor<12x17x144xf32> -> tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32>
  %r0, %r1 = train.split %r dim = 0 {note} : tensor<6x5xf32> -> tensor<3x5xf32>, tensor<3x5xf32>
  %whole = train.split %r dim = 1 : tensor<6x5xf32> -> tensor<6x5xf32>
  %0 = train.concat %q, %k, %v dim = 2 : tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32> -> tensor<12x17x144xf32>
  // Inputs may differ in size along the concatenated dimension.
  %1 = train.concat %a, %b, %a dim = 1 {note} : tensor<4x2xbf16>, tensor<4x3xbf16>, tensor<4x2xbf16> -> tensor<4x7xbf16>
  %2 = train.concat %r1, %r0 dim = 0 : tensor<3x5xf32>, tensor<3x5xf32> -> tensor<6x5xf32>
  %3 = train.concat %whole dim = 0 : tensor<6x5xf32> -> tensor<6x5xf32>
  return
}

// CHECK-LABEL: func.func @cross_entropy(
// CHECK-SAME:      %[[L:[a-z0-9_]+]]: tensor<12x17x65xf32>, %[[T:[a-z0-9_]+]]: tensor<12x17xi32>, %[[LB:[a-z0-9_]+]]: tensor<8x10xbf16>, %[[TL:[a-z0-9_]+]]: tensor<8xi64>, %[[L1:[a-z0-9_]+]]: tensor<10xf32>, %[[T0:[a-z0-9_]+]]: tensor<i64>)
// CHECK-NEXT:    train.cross_entropy %[[L]], %[[T]] : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.cross_entropy %[[LB]], %[[TL]] {note} : (tensor<8x10xbf16>, tensor<8xi64>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.cross_entropy %[[L1]], %[[T0]] : (tensor<10xf32>, tensor<i64>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.cross_entropy %[[L]], %[[T]] {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64} : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.cross_entropy %[[L]], %[[T]] {ignore_index = -100 : i64} : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.cross_entropy %[[LB]], %[[TL]] {label_smoothing = 0.000000e+00 : f64} : (tensor<8x10xbf16>, tensor<8xi64>) -> tensor<f32>{{$}}
// CHECK-NEXT:    %[[N:.*]] = train.count_targets %[[T]] ignore_index = 3 : tensor<12x17xi32> -> tensor<f32>{{$}}
// CHECK-NEXT:    train.cross_entropy %[[L]], %[[T]] count %[[N]] {ignore_index = 3 : i64} : (tensor<12x17x65xf32>, tensor<12x17xi32>, tensor<f32>) -> tensor<f32>{{$}}
func.func @cross_entropy(%l: tensor<12x17x65xf32>, %t: tensor<12x17xi32>, %lb: tensor<8x10xbf16>, %tl: tensor<8xi64>, %l1: tensor<10xf32>, %t0: tensor<i64>) {
  %0 = train.cross_entropy %l, %t : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>
  // bf16 logits still give an f32 loss.
  %1 = train.cross_entropy %lb, %tl {note} : (tensor<8x10xbf16>, tensor<8xi64>) -> tensor<f32>
  %2 = train.cross_entropy %l1, %t0 : (tensor<10xf32>, tensor<i64>) -> tensor<f32>
  // PyTorch's ignore_index (a token id, or -100) and label_smoothing.
  %3 = train.cross_entropy %l, %t {ignore_index = 0 : i64, label_smoothing = 0.1 : f64} : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>
  %4 = train.cross_entropy %l, %t {ignore_index = -100 : i64} : (tensor<12x17x65xf32>, tensor<12x17xi32>) -> tensor<f32>
  %5 = train.cross_entropy %lb, %tl {label_smoothing = 0.0 : f64} : (tensor<8x10xbf16>, tensor<8xi64>) -> tensor<f32>
  // A data-parallel part's share of the global count.
  %n = train.count_targets %t ignore_index = 3 : tensor<12x17xi32> -> tensor<f32>
  %6 = train.cross_entropy %l, %t count %n {ignore_index = 3 : i64} : (tensor<12x17x65xf32>, tensor<12x17xi32>, tensor<f32>) -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @reductions(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<12x17x48xf32>, %[[H:[a-z0-9_]+]]: tensor<4x8xbf16>)
// CHECK-NEXT:    train.sum %[[X]] dims = [0, 1] : tensor<12x17x48xf32> -> tensor<48xf32>{{$}}
// CHECK-NEXT:    train.sum %[[X]] dims = [2, 0] {note} : tensor<12x17x48xf32> -> tensor<17xf32>{{$}}
// CHECK-NEXT:    train.sum %[[H]] dims = [] : tensor<4x8xbf16> -> tensor<4x8xbf16>{{$}}
// CHECK-NEXT:    train.mean %[[X]] dims = [2] : tensor<12x17x48xf32> -> tensor<12x17xf32>{{$}}
// CHECK-NEXT:    train.mean %[[H]] dims = [0, 1] : tensor<4x8xbf16> -> tensor<bf16>{{$}}
func.func @reductions(%x: tensor<12x17x48xf32>, %h: tensor<4x8xbf16>) {
  %0 = train.sum %x dims = [0, 1] : tensor<12x17x48xf32> -> tensor<48xf32>
  // Dimensions need not be sorted.
  %1 = train.sum %x dims = [2, 0] {note} : tensor<12x17x48xf32> -> tensor<17xf32>
  %2 = train.sum %h dims = [] : tensor<4x8xbf16> -> tensor<4x8xbf16>
  %3 = train.mean %x dims = [2] : tensor<12x17x48xf32> -> tensor<12x17xf32>
  %4 = train.mean %h dims = [0, 1] : tensor<4x8xbf16> -> tensor<bf16>
  return
}

// CHECK-LABEL: func.func @cast(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<48xf32>, %[[H:[a-z0-9_]+]]: tensor<2x3xbf16>, %[[S:[a-z0-9_]+]]: tensor<f32>)
// CHECK-NEXT:    train.cast %[[X]] : tensor<48xf32> to tensor<48xbf16>{{$}}
// CHECK-NEXT:    train.cast %[[H]] : tensor<2x3xbf16> to tensor<2x3xf32>{{$}}
// CHECK-NEXT:    train.cast %[[S]] {note} : tensor<f32> to tensor<f32>{{$}}
func.func @cast(%x: tensor<48xf32>, %h: tensor<2x3xbf16>, %s: tensor<f32>) {
  %0 = train.cast %x : tensor<48xf32> to tensor<48xbf16>
  %1 = train.cast %h : tensor<2x3xbf16> to tensor<2x3xf32>
  %2 = train.cast %s {note} : tensor<f32> to tensor<f32>
  return
}

// The causal mask's derivative form.
// CHECK-LABEL: func.func @causal_mask_zero(
// CHECK-SAME:      %[[S:[a-z0-9_]+]]: tensor<2x5x5xf32>)
// CHECK-NEXT:    train.causal_mask %[[S]] zero : tensor<2x5x5xf32>{{$}}
// CHECK-NEXT:    train.causal_mask %[[S]] zero {note} : tensor<2x5x5xf32>{{$}}
func.func @causal_mask_zero(%s: tensor<2x5x5xf32>) {
  %0 = train.causal_mask %s zero : tensor<2x5x5xf32>
  %1 = train.causal_mask %s zero {note} : tensor<2x5x5xf32>
  return
}

//===----------------------------------------------------------------------===//
// Optimizer state: train.state, train.write (and train.read of a state)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: module @state {
// CHECK-NEXT:    train.param @w : tensor<4x8xbf16> init = normal std = 2.000000e-02 decay{{$}}
// CHECK-NEXT:    train.param @b : tensor<8xf32> init = zeros{{$}}
// CHECK-NEXT:    train.state @w.master : tensor<4x8xf32> master of @w{{$}}
// CHECK-NEXT:    train.state @w.exp_avg : tensor<32xf32> exp_avg of @w{{$}}
// CHECK-NEXT:    train.state @w.exp_avg_sq : tensor<4x8xf32> exp_avg_sq of @w {note}{{$}}
// CHECK-NEXT:    train.state @b.momentum_buffer : tensor<8xf32> momentum_buffer of @b{{$}}
// CHECK-NEXT:    func.func @read_write(%[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[Y:[a-z0-9_]+]]: tensor<4x8xbf16>, %[[Z:[a-z0-9_]+]]: tensor<32xf32>) {
// CHECK-NEXT:      train.read @w.master : tensor<4x8xf32>{{$}}
// CHECK-NEXT:      train.write %[[X]] to @w.master : tensor<4x8xf32>{{$}}
// CHECK-NEXT:      train.write %[[Z]] to @w.exp_avg : tensor<32xf32>{{$}}
// CHECK-NEXT:      train.write %[[Y]] to @w {note} : tensor<4x8xbf16>{{$}}
module @state {
  train.param @w : tensor<4x8xbf16> init = normal std = 0.02 decay
  train.param @b : tensor<8xf32> init = zeros
  train.state @w.master : tensor<4x8xf32> master of @w
  // A state may be a flat shard-friendly view: only the element count must match.
  train.state @w.exp_avg : tensor<32xf32> exp_avg of @w
  train.state @w.exp_avg_sq : tensor<4x8xf32> exp_avg_sq of @w {note}
  train.state @b.momentum_buffer : tensor<8xf32> momentum_buffer of @b
  func.func @read_write(%x: tensor<4x8xf32>, %y: tensor<4x8xbf16>, %z: tensor<32xf32>) {
    %0 = train.read @w.master : tensor<4x8xf32>
    train.write %x to @w.master : tensor<4x8xf32>
    train.write %z to @w.exp_avg : tensor<32xf32>
    train.write %y to @w {note} : tensor<4x8xbf16>
    return
  }
}

//===----------------------------------------------------------------------===//
// train.broadcast, train.fill, train.sqrt
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @broadcast_fill_sqrt(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<17x1xf32>, %[[S:[a-z0-9_]+]]: tensor<f32>, %[[H:[a-z0-9_]+]]: tensor<4xbf16>)
// CHECK-NEXT:    train.broadcast %[[X]] : tensor<17x1xf32> -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.broadcast %[[S]] : tensor<f32> -> tensor<3xf32>{{$}}
// CHECK-NEXT:    train.broadcast %[[H]] {note} : tensor<4xbf16> -> tensor<4xbf16>{{$}}
// CHECK-NEXT:    train.fill 1.000000e+00 : tensor<f32>{{$}}
// CHECK-NEXT:    train.fill -5.000000e-01 {note} : tensor<2x3xbf16>{{$}}
// CHECK-NEXT:    train.fill 0xFFF0000000000000 : tensor<4xf32>{{$}}
// CHECK-NEXT:    train.sqrt %[[H]] : tensor<4xbf16>{{$}}
// CHECK-NEXT:    train.sqrt %[[S]] : tensor<f32>{{$}}
func.func @broadcast_fill_sqrt(%x: tensor<17x1xf32>, %s: tensor<f32>, %h: tensor<4xbf16>) {
  %0 = train.broadcast %x : tensor<17x1xf32> -> tensor<12x17x48xf32>
  %1 = train.broadcast %s : tensor<f32> -> tensor<3xf32>
  %2 = train.broadcast %h {note} : tensor<4xbf16> -> tensor<4xbf16>
  %3 = train.fill 1.0 : tensor<f32>
  %4 = train.fill -0.5 {note} : tensor<2x3xbf16>
  // -inf, as an attention mask needs.
  %5 = train.fill 0xFFF0000000000000 : tensor<4xf32>
  %6 = train.sqrt %h : tensor<4xbf16>
  %7 = train.sqrt %s : tensor<f32>
  return
}

//===----------------------------------------------------------------------===//
// Derivative helpers
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @grads(
// CHECK-SAME:      %[[DX:[a-z0-9_]+]]: tensor<12x17x48xf32>, %[[TOK:[a-z0-9_]+]]: tensor<12x17xi32>, %[[DH:[a-z0-9_]+]]: tensor<5x8xbf16>, %[[IDS:[a-z0-9_]+]]: tensor<5xi64>,
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<12x17x48xf32>, %[[W:[a-z0-9_]+]]: tensor<48xf32>, %[[P:[a-z0-9_]+]]: tensor<2x3x5x4xf32>,
// CHECK-SAME:      %[[ONE:[a-z0-9_]+]]: tensor<f32>, %[[L:[a-z0-9_]+]]: tensor<12x17x65xbf16>, %[[T:[a-z0-9_]+]]: tensor<12x17xi64>)
// CHECK-NEXT:    train.embedding_grad %[[DX]][%[[TOK]]] : (tensor<12x17x48xf32>, tensor<12x17xi32>) -> tensor<65x48xf32>{{$}}
// CHECK-NEXT:    train.embedding_grad %[[DH]][%[[IDS]]] {note} : (tensor<5x8xbf16>, tensor<5xi64>) -> tensor<10x8xbf16>{{$}}
// CHECK-NEXT:    train.gelu_grad %[[DX]], %[[X]] tanh : tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.gelu_grad %[[DH]], %[[DH]] erf {note} : tensor<5x8xbf16>{{$}}
// CHECK-NEXT:    train.relu_grad %[[DX]], %[[X]] : tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.softmax_grad %[[DX]], %[[X]] : tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    %input_grad, %weight_grad, %bias_grad = train.layernorm_grad %[[DX]], %[[X]], %[[W]] eps = 1.000000e-05 : (tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<48xf32>) -> (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>){{$}}
// CHECK-NEXT:    %query_grad, %key_grad, %value_grad = train.attention_grad %[[P]], %[[P]], %[[P]], %[[P]] causal scale = 2.500000e-01 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>){{$}}
// CHECK-NEXT:    %query_grad_{{[0-9]+}}, %key_grad_{{[0-9]+}}, %value_grad_{{[0-9]+}} = train.attention_grad %[[P]], %[[P]], %[[P]], %[[P]] scale = 5.000000e-01 {note} : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>){{$}}
// CHECK-NEXT:    train.cross_entropy_grad %[[ONE]], %[[L]], %[[T]] : (tensor<f32>, tensor<12x17x65xbf16>, tensor<12x17xi64>) -> tensor<12x17x65xbf16>{{$}}
// CHECK-NEXT:    train.cross_entropy_grad %[[ONE]], %[[L]], %[[T]] count %[[ONE]] {ignore_index = 7 : i64, label_smoothing = 2.500000e-01 : f64} : (tensor<f32>, tensor<12x17x65xbf16>, tensor<12x17xi64>, tensor<f32>) -> tensor<12x17x65xbf16>{{$}}
func.func @grads(%dx: tensor<12x17x48xf32>, %tok: tensor<12x17xi32>, %dh: tensor<5x8xbf16>, %ids: tensor<5xi64>,
                 %x: tensor<12x17x48xf32>, %w: tensor<48xf32>, %p: tensor<2x3x5x4xf32>,
                 %one: tensor<f32>, %l: tensor<12x17x65xbf16>, %t: tensor<12x17xi64>) {
  %0 = train.embedding_grad %dx[%tok] : (tensor<12x17x48xf32>, tensor<12x17xi32>) -> tensor<65x48xf32>
  %1 = train.embedding_grad %dh[%ids] {note} : (tensor<5x8xbf16>, tensor<5xi64>) -> tensor<10x8xbf16>
  %2 = train.gelu_grad %dx, %x tanh : tensor<12x17x48xf32>
  %3 = train.gelu_grad %dh, %dh erf {note} : tensor<5x8xbf16>
  %4 = train.relu_grad %dx, %x : tensor<12x17x48xf32>
  %5 = train.softmax_grad %dx, %x : tensor<12x17x48xf32>
  %6:3 = train.layernorm_grad %dx, %x, %w eps = 1.0e-5 : (tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<48xf32>) -> (tensor<12x17x48xf32>, tensor<48xf32>, tensor<48xf32>)
  %7:3 = train.attention_grad %p, %p, %p, %p causal scale = 0.25 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>)
  %8:3 = train.attention_grad %p, %p, %p, %p scale = 0.5 {note} : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>)
  %9 = train.cross_entropy_grad %one, %l, %t : (tensor<f32>, tensor<12x17x65xbf16>, tensor<12x17xi64>) -> tensor<12x17x65xbf16>
  %10 = train.cross_entropy_grad %one, %l, %t count %one {ignore_index = 7 : i64, label_smoothing = 0.25 : f64} : (tensor<f32>, tensor<12x17x65xbf16>, tensor<12x17xi64>, tensor<f32>) -> tensor<12x17x65xbf16>
  return
}

//===----------------------------------------------------------------------===//
// Optimizer math
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @optimizer_math(
// CHECK-SAME:      %[[STEP:[a-z0-9_]+]]: tensor<i64>, %[[G:[a-z0-9_]+]]: tensor<65x48xbf16>, %[[N:[a-z0-9_]+]]: tensor<f32>, %[[P:[a-z0-9_]+]]: tensor<48xf32>)
// CHECK-NEXT:    train.lr_schedule %[[STEP]] lr = 1.000000e-01 schedule = constant : (tensor<i64>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.lr_schedule %[[STEP]] lr = 6.000000e-04 schedule = cosine warmup = 10 min_lr = 6.000000e-05 max_steps = 100 : (tensor<i64>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.lr_schedule %[[STEP]] lr = 1.000000e+00 schedule = cosine max_steps = 5 {note} : (tensor<i64>) -> tensor<f32>{{$}}
// CHECK-NEXT:    train.squared_norm %[[G]] : tensor<65x48xbf16> -> tensor<f32>{{$}}
// CHECK-NEXT:    train.squared_norm %[[P]] {note} : tensor<48xf32> -> tensor<f32>{{$}}
// CHECK-NEXT:    train.clip_coef %[[N]] max_norm = 1.000000e+00 : tensor<f32>{{$}}
// CHECK-NEXT:    %new_param, %new_exp_avg, %new_exp_avg_sq = train.adamw_update %[[P]], %[[P]], %[[P]], %[[P]], %[[N]], %[[STEP]] beta1 = 9.000000e-01 beta2 = 0.94999999999999996 eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<48xf32>{{$}}
// CHECK-NEXT:    %new_param_{{[0-9]+}}, %new_exp_avg_{{[0-9]+}}, %new_exp_avg_sq_{{[0-9]+}} = train.adamw_update %[[P]], %[[P]], %[[P]], %[[P]], %[[N]], %[[STEP]] beta1 = 0.000000e+00 beta2 = 0.000000e+00 eps = 1.000000e+00 weight_decay = 0.000000e+00 {note} : tensor<48xf32>{{$}}
// CHECK-NEXT:    %new_param_{{[0-9]+}}, %new_momentum_buffer = train.sgd_update %[[P]], %[[P]], %[[P]], %[[N]] momentum = 9.000000e-01 weight_decay = 0.000000e+00 : tensor<48xf32>{{$}}
// A rank's shard of a sharded flat buffer, decay on the ranges only.
// CHECK-NEXT:    %new_param_{{[0-9]+}}, %new_exp_avg_{{[0-9]+}}, %new_exp_avg_sq_{{[0-9]+}} = train.adamw_update %[[P]], %[[P]], %[[P]], %[[P]], %[[N]], %[[STEP]] beta1 = 9.000000e-01 beta2 = 0.94999999999999996 eps = 1.000000e-08 weight_decay = 1.000000e-01 decay_ranges [0, 30, 60, 96] : tensor<48xf32>{{$}}
// CHECK-NEXT:    %new_param_{{[0-9]+}}, %new_momentum_buffer_{{[0-9]+}} = train.sgd_update %[[P]], %[[P]], %[[P]], %[[N]] momentum = 9.000000e-01 weight_decay = 1.000000e-02 decay_ranges [] {note} : tensor<48xf32>{{$}}
// The clipping coefficient folded in (train-fuse-optimizer).
// CHECK-NEXT:    %new_param_{{[0-9]+}}, %new_exp_avg_{{[0-9]+}}, %new_exp_avg_sq_{{[0-9]+}} = train.adamw_update %[[P]], %[[P]], %[[P]], %[[P]], %[[N]], %[[STEP]] grad_scale %[[N]] beta1 = 9.000000e-01 beta2 = 0.94999999999999996 eps = 1.000000e-08 weight_decay = 1.000000e-01 decay_ranges [0, 48] : tensor<48xf32>{{$}}
// The whole buffer on every rank (stage 0's buckets).
// CHECK-NEXT:    %new_param_{{[0-9]+}}, %new_exp_avg_{{[0-9]+}}, %new_exp_avg_sq_{{[0-9]+}} = train.adamw_update %[[P]], %[[P]], %[[P]], %[[P]], %[[N]], %[[STEP]] beta1 = 9.000000e-01 beta2 = 0.94999999999999996 eps = 1.000000e-08 weight_decay = 1.000000e-01 decay_ranges [0, 30] replicated : tensor<48xf32>{{$}}
// CHECK-NEXT:    %new_param_{{[0-9]+}}, %new_momentum_buffer_{{[0-9]+}} = train.sgd_update %[[P]], %[[P]], %[[P]], %[[N]] momentum = 9.000000e-01 weight_decay = 1.000000e-02 decay_ranges [2, 4] replicated {note} : tensor<48xf32>{{$}}
func.func @optimizer_math(%step: tensor<i64>, %g: tensor<65x48xbf16>, %n: tensor<f32>, %p: tensor<48xf32>) {
  %0 = train.lr_schedule %step lr = 0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
  %1 = train.lr_schedule %step lr = 6.0e-4 schedule = cosine warmup = 10 min_lr = 6.0e-5 max_steps = 100 : (tensor<i64>) -> tensor<f32>
  // Defaulted keys spelled out are elided when printed.
  %2 = train.lr_schedule %step lr = 1.0 schedule = cosine warmup = 0 min_lr = 0.0 max_steps = 5 {note} : (tensor<i64>) -> tensor<f32>
  %3 = train.squared_norm %g : tensor<65x48xbf16> -> tensor<f32>
  %4 = train.squared_norm %p {note} : tensor<48xf32> -> tensor<f32>
  %5 = train.clip_coef %n max_norm = 1.0 : tensor<f32>
  %6:3 = train.adamw_update %p, %p, %p, %p, %n, %step beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 weight_decay = 0.1 : tensor<48xf32>
  %7:3 = train.adamw_update %p, %p, %p, %p, %n, %step beta1 = 0.0 beta2 = 0.0 eps = 1.0 weight_decay = 0.0 {note} : tensor<48xf32>
  %8:2 = train.sgd_update %p, %p, %p, %n momentum = 0.9 weight_decay = 0.0 : tensor<48xf32>
  %9:3 = train.adamw_update %p, %p, %p, %p, %n, %step beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 weight_decay = 0.1 decay_ranges [0, 30, 60, 96] : tensor<48xf32>
  %10:2 = train.sgd_update %p, %p, %p, %n momentum = 0.9 weight_decay = 0.01 decay_ranges [] {note} : tensor<48xf32>
  %11:3 = train.adamw_update %p, %p, %p, %p, %n, %step grad_scale %n beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 weight_decay = 0.1 decay_ranges [0, 48] : tensor<48xf32>
  %12:3 = train.adamw_update %p, %p, %p, %p, %n, %step beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 weight_decay = 0.1 decay_ranges [0, 30] replicated : tensor<48xf32>
  %13:2 = train.sgd_update %p, %p, %p, %n momentum = 0.9 weight_decay = 0.01 decay_ranges [2, 4] replicated {note} : tensor<48xf32>
  return
}
