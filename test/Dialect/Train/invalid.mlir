// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Every diagnostic the train dialect's verifiers and shape rules emit, one
// case per split, followed by the type-constraint errors ODS generates.

//===----------------------------------------------------------------------===//
// train.param
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'train.param' op normal initializer of @w needs a standard deviation (std = ...)}}
train.param @w : tensor<4x4xf32> init = normal

// -----

// expected-error @+1 {{'train.param' op std of @w must be positive, got 0.000000e+00}}
train.param @w : tensor<4x4xf32> init = normal std = 0.0

// -----

// expected-error @+1 {{'train.param' op std of @w must be positive, got -2.000000e-02}}
train.param @w : tensor<4x4xf32> init = normal std = -0.02 decay

// -----

// expected-error @+1 {{'train.param' op std must be finite, got nan}}
train.param @w : tensor<4x4xf32> init = normal std = 0x7FF8000000000000

// -----

// expected-error @+1 {{'train.param' op std must be finite, got inf}}
train.param @w : tensor<4x4xf32> init = normal std = 0x7FF0000000000000

// -----

// expected-error @+1 {{'train.param' op std is only meaningful with init = normal, but @b has init = zeros}}
train.param @b : tensor<4xf32> init = zeros std = 0.02

// -----

// expected-error @+1 {{'train.param' op std is only meaningful with init = normal, but @g has init = ones}}
train.param @g : tensor<4xbf16> init = ones std = 1.0

// -----

// expected-error @+1 {{'train.param' op type of @w must have a static shape, got 'tensor<?x4xf32>'}}
train.param @w : tensor<?x4xf32> init = zeros

// -----

// expected-error @+1 {{'train.param' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of 32-bit float or bfloat16 type values}}
train.param @ids : tensor<4xi32> init = zeros

// -----

// expected-error @+1 {{'train.param' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of 32-bit float or bfloat16 type values}}
train.param @half : tensor<4xf16> init = zeros

// -----

// expected-error @+1 {{'train.param' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of 32-bit float or bfloat16 type values}}
train.param @unranked : tensor<*xf32> init = zeros

// -----

func.func @param_in_func() {
  // expected-error @+1 {{'train.param' op expects parent op 'builtin.module'}}
  train.param @w : tensor<4xf32> init = zeros
  return
}

// -----

// expected-error @+1 {{custom op 'train.param' expected string or keyword containing one of the following enum values for attribute 'init' [zeros, ones, normal]}}
train.param @w : tensor<4xf32> init = uniform

// -----

//===----------------------------------------------------------------------===//
// train.optimizer
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'train.optimizer' op a model has one optimizer, but this module declares 2}}
train.optimizer sgd lr = 0.1
train.optimizer adamw lr = 0.1 beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8

// -----

func.func @optimizer_in_func() {
  // expected-error @+1 {{'train.optimizer' op expects parent op 'builtin.module'}}
  train.optimizer sgd lr = 0.1
  return
}

// -----

// expected-error @+1 {{'train.optimizer' op lr must be positive, got 0.000000e+00}}
train.optimizer sgd lr = 0.0

// -----

// expected-error @+1 {{'train.optimizer' op lr must be positive, got -1.000000e-03}}
train.optimizer adamw lr = -1.0e-3 beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8

// -----

// expected-error @+1 {{'train.optimizer' op lr must be finite, got nan}}
train.optimizer sgd lr = 0x7FF8000000000000

// -----

// expected-error @+1 {{'train.optimizer' op lr must be finite, got inf}}
train.optimizer sgd lr = 0x7FF0000000000000

// -----

// expected-error @+1 {{'train.optimizer' op beta2 must be finite, got nan}}
train.optimizer adamw lr = 1.0e-3 beta1 = 0.9 beta2 = 0x7FF8000000000000 eps = 1.0e-8

// -----

// expected-error @+1 {{'train.optimizer' op grad_clip must be finite, got inf}}
train.optimizer sgd lr = 0.1 grad_clip = 0x7FF0000000000000

// -----

// expected-error @+1 {{'train.optimizer' op min_lr must be finite, got -inf}}
train.optimizer sgd lr = 0.1 min_lr = 0xFFF0000000000000

// -----

// expected-error @+1 {{'train.optimizer' op beta1 is an AdamW hyper-parameter; sgd takes lr, momentum and weight_decay}}
train.optimizer sgd lr = 0.1 beta1 = 0.9

// -----

// expected-error @+1 {{'train.optimizer' op beta2 is an AdamW hyper-parameter; sgd takes lr, momentum and weight_decay}}
train.optimizer sgd lr = 0.1 beta2 = 0.999

// -----

// expected-error @+1 {{'train.optimizer' op eps is an AdamW hyper-parameter; sgd takes lr, momentum and weight_decay}}
train.optimizer sgd lr = 0.1 eps = 1.0e-8 momentum = 0.9

// -----

// expected-error @+1 {{'train.optimizer' op momentum is an SGD hyper-parameter; adamw takes beta1, beta2 and eps}}
train.optimizer adamw lr = 1.0e-3 beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8 momentum = 0.9

// -----

// expected-error @+1 {{'train.optimizer' op adamw needs beta1}}
train.optimizer adamw lr = 1.0e-3 beta2 = 0.999 eps = 1.0e-8

// -----

// expected-error @+1 {{'train.optimizer' op adamw needs beta2}}
train.optimizer adamw lr = 1.0e-3 beta1 = 0.9 eps = 1.0e-8

// -----

// expected-error @+1 {{'train.optimizer' op adamw needs eps}}
train.optimizer adamw lr = 1.0e-3 beta1 = 0.9 beta2 = 0.999

// -----

// expected-error @+1 {{'train.optimizer' op beta1 must be in [0, 1), got 1.000000e+00}}
train.optimizer adamw lr = 1.0e-3 beta1 = 1.0 beta2 = 0.999 eps = 1.0e-8

// -----

// expected-error @+1 {{'train.optimizer' op beta1 must be in [0, 1), got -1.000000e-01}}
train.optimizer adamw lr = 1.0e-3 beta1 = -0.1 beta2 = 0.999 eps = 1.0e-8

// -----

// expected-error @+1 {{'train.optimizer' op beta2 must be in [0, 1), got 1.500000e+00}}
train.optimizer adamw lr = 1.0e-3 beta1 = 0.9 beta2 = 1.5 eps = 1.0e-8

// -----

// expected-error @+1 {{'train.optimizer' op eps must be positive, got 0.000000e+00}}
train.optimizer adamw lr = 1.0e-3 beta1 = 0.9 beta2 = 0.999 eps = 0.0

// -----

// expected-error @+1 {{'train.optimizer' op eps must be positive, got -1.000000e-08}}
train.optimizer adamw lr = 1.0e-3 beta1 = 0.9 beta2 = 0.999 eps = -1.0e-8

// -----

// expected-error @+1 {{'train.optimizer' op momentum must be in [0, 1), got 1.000000e+00}}
train.optimizer sgd lr = 0.1 momentum = 1.0

// -----

// expected-error @+1 {{'train.optimizer' op momentum must be in [0, 1), got -5.000000e-01}}
train.optimizer sgd lr = 0.1 momentum = -0.5

// -----

// expected-error @+1 {{'train.optimizer' op weight_decay must be non-negative, got -1.000000e-01}}
train.optimizer sgd lr = 0.1 weight_decay = -0.1

// -----

// expected-error @+1 {{'train.optimizer' op grad_clip must be non-negative (0 disables clipping), got -1.000000e+00}}
train.optimizer adamw lr = 1.0e-3 beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8 grad_clip = -1.0

// -----

// expected-error @+1 {{'train.optimizer' op warmup must be non-negative, got -10}}
train.optimizer sgd lr = 0.1 schedule = cosine warmup = -10 max_steps = 100

// -----

// expected-error @+1 {{'train.optimizer' op warmup, min_lr and max_steps belong to the cosine schedule; the constant schedule takes none of them}}
train.optimizer sgd lr = 0.01 warmup = 5 max_steps = 3

// -----

// expected-error @+1 {{'train.optimizer' op min_lr must be in [0, lr], got -1.000000e-04}}
train.optimizer sgd lr = 0.1 schedule = cosine min_lr = -1.0e-4 max_steps = 100

// -----

// expected-error @+1 {{'train.optimizer' op min_lr must be in [0, lr], got 2.000000e-01}}
train.optimizer sgd lr = 0.1 schedule = cosine min_lr = 0.2 max_steps = 100

// -----

// expected-error @+1 {{'train.optimizer' op the cosine schedule needs max_steps}}
train.optimizer adamw lr = 6.0e-4 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 schedule = cosine warmup = 10 min_lr = 6.0e-5

// -----

// expected-error @+1 {{'train.optimizer' op max_steps (10) must exceed warmup (10)}}
train.optimizer adamw lr = 6.0e-4 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-8 schedule = cosine warmup = 10 max_steps = 10

// -----

// expected-error @+1 {{'train.optimizer' op max_steps (0) must exceed warmup (0)}}
train.optimizer sgd lr = 0.1 schedule = cosine max_steps = 0

// -----

// expected-error @+1 {{custom op 'train.optimizer' expected string or keyword containing one of the following enum values for attribute 'kind' [sgd, adamw]}}
train.optimizer adam lr = 0.1

// -----

// expected-error @+1 {{custom op 'train.optimizer' expected string or keyword containing one of the following enum values for attribute 'schedule' [constant, cosine]}}
train.optimizer sgd lr = 0.1 schedule = linear

// -----

//===----------------------------------------------------------------------===//
// train.read
//===----------------------------------------------------------------------===//

train.param @w : tensor<4x4xf32> init = zeros
func.func @read_missing() -> tensor<4x4xf32> {
  // expected-error @+1 {{'train.read' op no train.param, train.state or train.buffer named @v}}
  %0 = train.read @v : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @not_a_param() -> tensor<4xf32> {
  // expected-error @+1 {{'train.read' op no train.param, train.state or train.buffer named @not_a_param}}
  %0 = train.read @not_a_param : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

train.param @w : tensor<4x4xf32> init = zeros
func.func @read_wrong_shape() -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.read' op result type 'tensor<4x8xf32>' differs from the type 'tensor<4x4xf32>' declared by @w}}
  %0 = train.read @w : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

train.param @w : tensor<4x4xf32> init = zeros
func.func @read_wrong_element_type() -> tensor<4x4xbf16> {
  // expected-error @+1 {{'train.read' op result type 'tensor<4x4xbf16>' differs from the type 'tensor<4x4xf32>' declared by @w}}
  %0 = train.read @w : tensor<4x4xbf16>
  return %0 : tensor<4x4xbf16>
}

// -----

// The parameter lives in the outer module; the read's nearest symbol table
// is the inner one.
train.param @w : tensor<4xf32> init = zeros
module @inner {
  func.func @read_outer() -> tensor<4xf32> {
    // expected-error @+1 {{'train.read' op no train.param, train.state or train.buffer named @w}}
    %0 = train.read @w : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

func.func @read_ids() {
  // expected-error @+1 {{'train.read' op result #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = train.read @ids : tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.embedding
//===----------------------------------------------------------------------===//

func.func @embedding_table_rank(%table: tensor<65xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding' op table must have rank 2 [vocab, dim], got 'tensor<65xf32>'}}
  %0 = train.embedding %table[%ids] : (tensor<65xf32>, tensor<12xi32>) -> tensor<12xf32>
  return
}

// -----

func.func @embedding_table_rank3(%table: tensor<2x65x48xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding' op table must have rank 2 [vocab, dim], got 'tensor<2x65x48xf32>'}}
  %0 = train.embedding %table[%ids] : (tensor<2x65x48xf32>, tensor<12xi32>) -> tensor<12x48xf32>
  return
}

// -----

func.func @embedding_result_shape(%table: tensor<65x48xf32>, %ids: tensor<12x17xi32>) {
  // expected-error @+1 {{'train.embedding' op result type 'tensor<12x17x65xf32>' does not match the expected 'tensor<12x17x48xf32>'}}
  %0 = train.embedding %table[%ids] : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x65xf32>
  return
}

// -----

func.func @embedding_result_element(%table: tensor<65x48xbf16>, %ids: tensor<12xi64>) {
  // expected-error @+1 {{'train.embedding' op result type 'tensor<12x48xf32>' does not match the expected 'tensor<12x48xbf16>'}}
  %0 = train.embedding %table[%ids] : (tensor<65x48xbf16>, tensor<12xi64>) -> tensor<12x48xf32>
  return
}

// -----

func.func @embedding_float_ids(%table: tensor<65x48xf32>, %ids: tensor<12xf32>) {
  // expected-error @+1 {{'train.embedding' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<12xf32>'}}
  %0 = train.embedding %table[%ids] : (tensor<65x48xf32>, tensor<12xf32>) -> tensor<12x48xf32>
  return
}

// -----

func.func @embedding_i16_ids(%table: tensor<65x48xf32>, %ids: tensor<12xi16>) {
  // expected-error @+1 {{'train.embedding' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<12xi16>'}}
  %0 = train.embedding %table[%ids] : (tensor<65x48xf32>, tensor<12xi16>) -> tensor<12x48xf32>
  return
}

// -----

func.func @embedding_dynamic_ids(%table: tensor<65x48xf32>, %ids: tensor<?xi32>) {
  // expected-error @+1 {{'train.embedding' op operand #1 must have a static shape, got 'tensor<?xi32>'}}
  %0 = train.embedding %table[%ids] : (tensor<65x48xf32>, tensor<?xi32>) -> tensor<?x48xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.matmul
//===----------------------------------------------------------------------===//

func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x16xbf16>) {
  // expected-error @+1 {{'train.matmul' op lhs element type 'f32' differs from rhs element type 'bf16'}}
  %0 = train.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xbf16>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_lhs_rank(%a: tensor<8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'train.matmul' op lhs and rhs must have rank >= 2, got lhs 8 and rhs 8x16}}
  %0 = train.matmul %a, %b : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  return
}

// -----

func.func @matmul_rhs_rank(%a: tensor<4x8xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'train.matmul' op lhs and rhs must have rank >= 2, got lhs 4x8 and rhs scalar}}
  %0 = train.matmul %a, %b : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4x8xf32>, %b: tensor<3x2x8x5xf32>) {
  // expected-error @+1 {{'train.matmul' op rhs batch dimensions 3x2 must equal lhs batch dimensions 2x3 or be absent}}
  %0 = train.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<3x2x8x5xf32>) -> tensor<2x3x4x5xf32>
  return
}

// -----

// A batched rhs is not broadcast over a batched lhs of higher rank.
func.func @matmul_batch_rank(%a: tensor<2x3x4x8xf32>, %b: tensor<3x8x5xf32>) {
  // expected-error @+1 {{'train.matmul' op rhs batch dimensions 3 must equal lhs batch dimensions 2x3 or be absent}}
  %0 = train.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.matmul_bias
//===----------------------------------------------------------------------===//

func.func @matmul_bias_length(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'train.matmul_bias' op bias must be a vector of the result's last dimension (16), got 8}}
  %0 = train.matmul_bias %a, %b, %c transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_bias_rank(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) {
  // expected-error @+1 {{'train.matmul_bias' op bias must be a vector of the result's last dimension (16), got 4x16}}
  %0 = train.matmul_bias %a, %b, %c : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_bias_element_type(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xbf16>) {
  // expected-error @+1 {{'train.matmul_bias' op lhs element type 'f32' differs from bias element type 'bf16'}}
  %0 = train.matmul_bias %a, %b, %c : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xbf16>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_batched_rhs_unbatched_lhs(%a: tensor<4x8xf32>, %b: tensor<2x8x5xf32>) {
  // expected-error @+1 {{'train.matmul' op rhs batch dimensions 2 must equal lhs batch dimensions (none: lhs has rank 2) or be absent}}
  %0 = train.matmul %a, %b : (tensor<4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) {
  // expected-error @+1 {{'train.matmul' op contraction dimensions differ: lhs has 8 and rhs has 16}}
  %0 = train.matmul %a, %b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_contraction_transpose_lhs(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'train.matmul' op contraction dimensions differ: lhs has 4 and rhs has 8}}
  %0 = train.matmul %a, %b transpose_lhs : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @matmul_contraction_transpose_rhs(%x: tensor<12x17x48xf32>, %w: tensor<48x144xf32>) {
  // expected-error @+1 {{'train.matmul' op contraction dimensions differ: lhs has 48 and rhs has 144}}
  %0 = train.matmul %x, %w transpose_rhs : (tensor<12x17x48xf32>, tensor<48x144xf32>) -> tensor<12x17x144xf32>
  return
}

// -----

func.func @matmul_result_shape(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'train.matmul' op result type 'tensor<16x4xf32>' does not match the expected 'tensor<4x16xf32>'}}
  %0 = train.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<16x4xf32>
  return
}

// -----

func.func @matmul_result_element(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>) {
  // expected-error @+1 {{'train.matmul' op result type 'tensor<4x16xf32>' does not match the expected 'tensor<4x16xbf16>'}}
  %0 = train.matmul %a, %b : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_i32(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) {
  // expected-error @+1 {{'train.matmul' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = train.matmul %a, %b : (tensor<4x8xi32>, tensor<8x16xi32>) -> tensor<4x16xi32>
  return
}

// -----

func.func @matmul_f64_result(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'train.matmul' op result #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4x16xf64>'}}
  %0 = train.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf64>
  return
}

// -----

func.func @matmul_dynamic(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'train.matmul' op operand #0 must have a static shape, got 'tensor<?x8xf32>'}}
  %0 = train.matmul %a, %b : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.add, train.sub, train.mul, train.div
//===----------------------------------------------------------------------===//

func.func @add_element_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'train.add' op lhs element type 'f32' differs from rhs element type 'bf16'}}
  %0 = train.add %a, %b : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @add_no_broadcast(%a: tensor<12x17x48xf32>, %b: tensor<17x47xf32>) {
  // expected-error @+1 {{'train.add' op operands do not broadcast: lhs 12x17x48 and rhs 17x47 differ at dimension 2 of the result (48 vs 47)}}
  %0 = train.add %a, %b : (tensor<12x17x48xf32>, tensor<17x47xf32>) -> tensor<12x17x48xf32>
  return
}

// -----

func.func @sub_no_broadcast(%a: tensor<3x4xf32>, %b: tensor<2x2x4xf32>) {
  // The dimension index is the result's: rhs has an extra leading one.
  // expected-error @+1 {{'train.sub' op operands do not broadcast: lhs 3x4 and rhs 2x2x4 differ at dimension 1 of the result (3 vs 2)}}
  %0 = train.sub %a, %b : (tensor<3x4xf32>, tensor<2x2x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @mul_result_shape(%a: tensor<4x1x3xf32>, %b: tensor<5x1xf32>) {
  // expected-error @+1 {{'train.mul' op result type 'tensor<4x1x3xf32>' does not match the expected 'tensor<4x5x3xf32>'}}
  %0 = train.mul %a, %b : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x1x3xf32>
  return
}

// -----

func.func @div_result_element(%a: tensor<4xbf16>, %b: tensor<bf16>) {
  // expected-error @+1 {{'train.div' op result type 'tensor<4xf32>' does not match the expected 'tensor<4xbf16>'}}
  %0 = train.div %a, %b : (tensor<4xbf16>, tensor<bf16>) -> tensor<4xf32>
  return
}

// -----

func.func @div_element_types(%a: tensor<4xbf16>, %b: tensor<f32>) {
  // expected-error @+1 {{'train.div' op lhs element type 'bf16' differs from rhs element type 'f32'}}
  %0 = train.div %a, %b : (tensor<4xbf16>, tensor<f32>) -> tensor<4xbf16>
  return
}

// -----

func.func @mul_dynamic_result(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'train.mul' op result #0 must have a static shape, got 'tensor<?xf32>'}}
  %0 = train.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @add_i64(%a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'train.add' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi64>'}}
  %0 = train.add %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.scale, train.gelu, train.relu (ODS constraints only)
//===----------------------------------------------------------------------===//

func.func @scale_type_change(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.scale' op requires the same type for all operands and results}}
  %0 = "train.scale"(%x) <{factor = 2.0 : f64}> : (tensor<4xf32>) -> tensor<4xbf16>
  return
}

// -----

func.func @gelu_shape_change(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.gelu' op requires the same type for all operands and results}}
  %0 = "train.gelu"(%x) <{approximation = 0 : i32}> : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @gelu_approximation(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'train.gelu' expected string or keyword containing one of the following enum values for attribute 'approximation' [tanh, erf]}}
  %0 = train.gelu %x exact : tensor<4xf32>
  return
}

// -----

func.func @relu_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{'train.relu' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = train.relu %x : tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.layernorm
//===----------------------------------------------------------------------===//

func.func @layernorm_rank(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{'train.layernorm' op input must have rank >= 1}}
  %0 = train.layernorm %x, %w, %w eps = 1.0e-5 : (tensor<f32>, tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
  return
}

// -----

func.func @layernorm_weight_shape(%x: tensor<12x17x48xf32>, %w: tensor<17x48xf32>, %b: tensor<48xf32>) {
  // expected-error @+1 {{'train.layernorm' op weight must have shape 48 (the last dimension of the input), got 17x48}}
  %0 = train.layernorm %x, %w, %b eps = 1.0e-5 : (tensor<12x17x48xf32>, tensor<17x48xf32>, tensor<48xf32>) -> tensor<12x17x48xf32>
  return
}

// -----

func.func @layernorm_bias_shape(%x: tensor<12x17x48xf32>, %w: tensor<48xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'train.layernorm' op bias must have shape 48 (the last dimension of the input), got scalar}}
  %0 = train.layernorm %x, %w, %b eps = 1.0e-5 : (tensor<12x17x48xf32>, tensor<48xf32>, tensor<f32>) -> tensor<12x17x48xf32>
  return
}

// -----

func.func @layernorm_weight_element(%x: tensor<4x8xf32>, %w: tensor<8xbf16>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm' op input element type 'f32' differs from weight element type 'bf16'}}
  %0 = train.layernorm %x, %w, %b eps = 1.0e-5 : (tensor<4x8xf32>, tensor<8xbf16>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layernorm_bias_element(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm' op input element type 'bf16' differs from bias element type 'f32'}}
  %0 = train.layernorm %x, %w, %b eps = 1.0e-5 : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
  return
}

// -----

func.func @layernorm_eps(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm' op eps must be positive, got 0.000000e+00}}
  %0 = train.layernorm %x, %w, %w eps = 0.0 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layernorm_eps_negative(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm' op eps must be positive, got -1.000000e-05}}
  %0 = train.layernorm %x, %w, %w eps = -1.0e-5 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layernorm_eps_nan(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm' op eps must be finite, got nan}}
  %0 = train.layernorm %x, %w, %w eps = 0x7FF8000000000000 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layernorm_result(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm' op result type 'tensor<4x8xbf16>' does not match the expected 'tensor<4x8xf32>'}}
  %0 = train.layernorm %x, %w, %w eps = 1.0e-5 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xbf16>
  return
}

// -----

func.func @layernorm_dynamic(%x: tensor<?x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm' op operand #0 must have a static shape, got 'tensor<?x8xf32>'}}
  %0 = train.layernorm %x, %w, %w eps = 1.0e-5 : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.softmax, train.causal_mask
//===----------------------------------------------------------------------===//

func.func @softmax_rank(%x: tensor<f32>) {
  // expected-error @+1 {{'train.softmax' op input must have rank >= 1}}
  %0 = train.softmax %x : tensor<f32>
  return
}

// -----

func.func @softmax_type_change(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.softmax' op requires the same type for all operands and results}}
  %0 = "train.softmax"(%x) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  return
}

// -----

func.func @softmax_dynamic(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{'train.softmax' op operand #0 must have a static shape, got 'tensor<4x?xf32>'}}
  %0 = train.softmax %x : tensor<4x?xf32>
  return
}

// -----

func.func @causal_mask_rank(%x: tensor<17xf32>) {
  // expected-error @+1 {{'train.causal_mask' op input must have rank >= 2 (the last two dimensions are queries and keys)}}
  %0 = train.causal_mask %x : tensor<17xf32>
  return
}

// -----

func.func @causal_mask_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'train.causal_mask' op input must have rank >= 2 (the last two dimensions are queries and keys)}}
  %0 = train.causal_mask %x : tensor<f32>
  return
}

// -----

func.func @causal_mask_dynamic(%x: tensor<?x17x17xf32>) {
  // expected-error @+1 {{'train.causal_mask' op operand #0 must have a static shape, got 'tensor<?x17x17xf32>'}}
  %0 = train.causal_mask %x : tensor<?x17x17xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.attention
//===----------------------------------------------------------------------===//

func.func @attention_query_rank(%q: tensor<12x17x16xf32>, %k: tensor<12x3x17x16xf32>) {
  // expected-error @+1 {{'train.attention' op query must have rank 4 [batch, heads, sequence, head_dim], got 12x17x16}}
  %0 = train.attention %q, %k, %k scale = 0.25 : (tensor<12x17x16xf32>, tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x17x16xf32>
  return
}

// -----

func.func @attention_dropout_p(%q: tensor<2x3x5x4xf32>) {
  // expected-error @+1 {{'train.attention' op dropout: p must be in [0, 1), got 1}}
  %0 = train.attention %q, %q, %q scale = 0.5 dropout = 1.0 seed = 3 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  return
}

// -----

func.func @attention_dropout_seed(%q: tensor<2x3x5x4xf32>) {
  // expected-error @+1 {{'train.attention' op dropout and seed go together}}
  %0 = train.attention %q, %q, %q scale = 0.5 dropout = 0.1 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  return
}

// -----

func.func @attention_step_without_dropout(%q: tensor<2x3x5x4xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.attention' op step, batch_dim, ranks, micro_batch and micro_batches describe a dropout, and there is none}}
  %0 = train.attention %q, %q, %q, %step scale = 0.5 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<i64>) -> tensor<2x3x5x4xf32>
  return
}

// -----

func.func @attention_dropout_batch_dim(%q: tensor<2x3x5x4xf32>) {
  // expected-error @+1 {{'train.attention' op batch_dim 2 of the probabilities is a query or key axis, not the batch (0 or 1)}}
  %0 = train.attention %q, %q, %q scale = 0.5 dropout = 0.1 seed = 1 batch_dim = 2 ranks = 2 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  return
}

// -----

func.func @attention_dropout_ranks(%q: tensor<2x3x5x4xf32>) {
  // expected-error @+1 {{'train.attention' op dropout: batch_dim and ranks go together}}
  %0 = train.attention %q, %q, %q scale = 0.5 dropout = 0.1 seed = 1 batch_dim = 0 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  return
}

// -----

func.func @attention_dropout_micro_batch(%q: tensor<2x3x5x4xf32>) {
  // expected-error @+1 {{'train.attention' op micro_batch needs batch_dim and ranks}}
  %0 = train.attention %q, %q, %q scale = 0.5 dropout = 0.1 seed = 1 micro_batch = 0 micro_batches = 2 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  return
}

// -----

func.func @attention_grad_dropout_seed(%q: tensor<2x3x5x4xf32>) {
  // expected-error @+1 {{'train.attention_grad' op dropout and seed go together}}
  %0:3 = train.attention_grad %q, %q, %q, %q scale = 0.5 seed = 2 : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>)
  return
}

// -----

func.func @attention_key_rank(%q: tensor<12x3x17x16xf32>, %k: tensor<1x12x3x17x16xf32>, %v: tensor<12x3x17x16xf32>) {
  // expected-error @+1 {{'train.attention' op key must have rank 4 [batch, heads, sequence, head_dim], got 1x12x3x17x16}}
  %0 = train.attention %q, %k, %v scale = 0.25 : (tensor<12x3x17x16xf32>, tensor<1x12x3x17x16xf32>, tensor<12x3x17x16xf32>) -> tensor<12x3x17x16xf32>
  return
}

// -----

func.func @attention_value_rank(%q: tensor<12x3x17x16xf32>, %v: tensor<17x16xf32>) {
  // expected-error @+1 {{'train.attention' op value must have rank 4 [batch, heads, sequence, head_dim], got 17x16}}
  %0 = train.attention %q, %q, %v scale = 0.25 : (tensor<12x3x17x16xf32>, tensor<12x3x17x16xf32>, tensor<17x16xf32>) -> tensor<12x3x17x16xf32>
  return
}

// -----

func.func @attention_key_element(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x5x8xbf16>, %v: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op query element type 'f32' differs from key element type 'bf16'}}
  %0 = train.attention %q, %k, %v scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xbf16>, tensor<2x3x5x8xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_value_element(%q: tensor<2x3x5x8xbf16>, %v: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op query element type 'bf16' differs from value element type 'f32'}}
  %0 = train.attention %q, %q, %v scale = 0.25 : (tensor<2x3x5x8xbf16>, tensor<2x3x5x8xbf16>, tensor<2x3x5x8xf32>) -> tensor<2x3x5x8xbf16>
  return
}

// -----

func.func @attention_key_value_shape(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x5x8xf32>, %v: tensor<2x3x6x8xf32>) {
  // expected-error @+1 {{'train.attention' op key shape 2x3x5x8 differs from value shape 2x3x6x8}}
  %0 = train.attention %q, %k, %v scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x6x8xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x3x5x8xf32>, %k: tensor<4x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op query 2x3x5x8 and key 4x3x5x8 must agree in batch and head_dim}}
  %0 = train.attention %q, %k, %k scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<4x3x5x8xf32>, tensor<4x3x5x8xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<2x3x5x8xf32>, %k: tensor<2x2x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op query heads (3) must be a multiple of key/value heads (2) for grouped-query attention}}
  %0 = train.attention %q, %k, %k scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x5x16xf32>) {
  // expected-error @+1 {{'train.attention' op query 2x3x5x8 and key 2x3x5x16 must agree in batch and head_dim}}
  %0 = train.attention %q, %k, %k scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x5x16xf32>, tensor<2x3x5x16xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_causal_lengths(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>) {
  // expected-error @+1 {{'train.attention' op causal attention needs as many queries as keys, got 5 and 7}}
  %0 = train.attention %q, %k, %k causal scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x8xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op scale must be positive, got 0.000000e+00}}
  %0 = train.attention %q, %q, %q causal scale = 0.0 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_scale_negative(%q: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op scale must be positive, got -3.535500e-01}}
  %0 = train.attention %q, %q, %q scale = -0.35355 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_scale_inf(%q: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention' op scale must be finite, got inf}}
  %0 = train.attention %q, %q, %q scale = 0x7FF0000000000000 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> tensor<2x3x5x8xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>) {
  // expected-error @+1 {{'train.attention' op result type 'tensor<2x3x7x8xf32>' does not match the expected 'tensor<2x3x5x8xf32>'}}
  %0 = train.attention %q, %k, %k scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x8xf32>) -> tensor<2x3x7x8xf32>
  return
}

// -----

func.func @attention_dynamic(%q: tensor<2x3x?x8xf32>) {
  // expected-error @+1 {{'train.attention' op operand #0 must have a static shape, got 'tensor<2x3x?x8xf32>'}}
  %0 = train.attention %q, %q, %q causal scale = 0.25 : (tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32>) -> tensor<2x3x?x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.reshape
//===----------------------------------------------------------------------===//

func.func @reshape_count(%x: tensor<12x17x48xf32>) {
  // expected-error @+1 {{'train.reshape' op input 12x17x48 has 9792 elements but the result 12x17x3x15 has 9180}}
  %0 = train.reshape %x : tensor<12x17x48xf32> -> tensor<12x17x3x15xf32>
  return
}

// -----

func.func @reshape_count_scalar(%x: tensor<2xf32>) {
  // expected-error @+1 {{'train.reshape' op input 2 has 2 elements but the result scalar has 1}}
  %0 = train.reshape %x : tensor<2xf32> -> tensor<f32>
  return
}

// -----

func.func @reshape_element(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.reshape' op element type changes from 'f32' to 'bf16'; use train.cast}}
  %0 = train.reshape %x : tensor<4x4xf32> -> tensor<16xbf16>
  return
}

// -----

func.func @reshape_dynamic_input(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'train.reshape' op operand #0 must have a static shape, got 'tensor<?x4xf32>'}}
  %0 = train.reshape %x : tensor<?x4xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reshape_dynamic_result(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'train.reshape' op result #0 must have a static shape, got 'tensor<?xf32>'}}
  %0 = train.reshape %x : tensor<2x4xf32> -> tensor<?xf32>
  return
}

// -----

func.func @reshape_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'train.reshape' op operand #0 must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %0 = "train.reshape"(%x) : (tensor<*xf32>) -> tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.transpose
//===----------------------------------------------------------------------===//

func.func @transpose_size(%x: tensor<12x17x3x16xf32>) {
  // expected-error @+1 {{'train.transpose' op permutation has 3 entries but the input has rank 4}}
  %0 = train.transpose %x [0, 2, 1] : tensor<12x17x3x16xf32> -> tensor<12x3x17xf32>
  return
}

// -----

func.func @transpose_duplicate(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'train.transpose' op permutation [1, 1] is not a permutation of 0..1}}
  %0 = train.transpose %x [1, 1] : tensor<3x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @transpose_out_of_range(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'train.transpose' op permutation [0, 2] is not a permutation of 0..1}}
  %0 = train.transpose %x [0, 2] : tensor<3x4xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @transpose_negative(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'train.transpose' op permutation [-1, 0] is not a permutation of 0..1}}
  %0 = train.transpose %x [-1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @transpose_result(%x: tensor<12x17x3x16xf32>) {
  // expected-error @+1 {{'train.transpose' op result type 'tensor<12x17x3x16xf32>' does not match the expected 'tensor<12x3x17x16xf32>'}}
  %0 = train.transpose %x [0, 2, 1, 3] : tensor<12x17x3x16xf32> -> tensor<12x17x3x16xf32>
  return
}

// -----

func.func @transpose_dynamic(%x: tensor<3x?xf32>) {
  // expected-error @+1 {{'train.transpose' op operand #0 must have a static shape, got 'tensor<3x?xf32>'}}
  %0 = train.transpose %x [1, 0] : tensor<3x?xf32> -> tensor<?x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.split
//===----------------------------------------------------------------------===//

func.func @split_dim(%x: tensor<12x17x144xf32>) {
  // expected-error @+1 {{'train.split' op dimension 3 is out of range for rank 3}}
  %0:3 = train.split %x dim = 3 : tensor<12x17x144xf32> -> tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32>
  return
}

// -----

func.func @split_negative_dim(%x: tensor<12x17x144xf32>) {
  // expected-error @+1 {{'train.split' op dimension -1 is out of range for rank 3}}
  %0:3 = train.split %x dim = -1 : tensor<12x17x144xf32> -> tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x48xf32>
  return
}

// -----

func.func @split_no_results(%x: tensor<6xf32>) {
  // expected-error @+1 {{'train.split' op needs at least one result}}
  "train.split"(%x) <{dim = 0 : i64}> : (tensor<6xf32>) -> ()
  return
}

// -----

func.func @split_divisibility(%x: tensor<12x17x144xf32>) {
  // expected-error @+1 {{'train.split' op dimension 1 of size 17 does not split into 2 equal parts}}
  %0:2 = train.split %x dim = 1 : tensor<12x17x144xf32> -> tensor<12x8x144xf32>, tensor<12x9x144xf32>
  return
}

// -----

func.func @split_result_shape(%x: tensor<12x17x144xf32>) {
  // expected-error @+1 {{'train.split' op result type 'tensor<12x17x96xf32>' does not match the expected 'tensor<12x17x48xf32>'}}
  %0:3 = train.split %x dim = 2 : tensor<12x17x144xf32> -> tensor<12x17x48xf32>, tensor<12x17x48xf32>, tensor<12x17x96xf32>
  return
}

// -----

func.func @split_result_element(%x: tensor<4x6xbf16>) {
  // expected-error @+1 {{'train.split' op result type 'tensor<4x3xf32>' does not match the expected 'tensor<4x3xbf16>'}}
  %0:2 = train.split %x dim = 1 : tensor<4x6xbf16> -> tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @split_dynamic(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'train.split' op operand #0 must have a static shape, got 'tensor<?x4xf32>'}}
  %0:2 = train.split %x dim = 0 : tensor<?x4xf32> -> tensor<?x4xf32>, tensor<?x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.concat
//===----------------------------------------------------------------------===//

func.func @concat_empty() {
  // expected-error @+1 {{'train.concat' op needs at least one input}}
  %0 = "train.concat"() <{dim = 0 : i64}> : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_dim(%a: tensor<4x2xf32>) {
  // expected-error @+1 {{'train.concat' op dimension 2 is out of range for rank 2}}
  %0 = train.concat %a, %a dim = 2 : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_negative_dim(%a: tensor<4x2xf32>) {
  // expected-error @+1 {{'train.concat' op dimension -1 is out of range for rank 2}}
  %0 = train.concat %a, %a dim = -1 : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_shape(%a: tensor<4x2xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+1 {{'train.concat' op input #1 of type 'tensor<5x3xf32>' does not match input #0 of type 'tensor<4x2xf32>' outside dimension 1}}
  %0 = train.concat %a, %b dim = 1 : tensor<4x2xf32>, tensor<5x3xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @concat_element(%a: tensor<4x2xf32>, %b: tensor<4x3xbf16>) {
  // expected-error @+1 {{'train.concat' op input #2 of type 'tensor<4x3xbf16>' does not match input #0 of type 'tensor<4x2xf32>' outside dimension 1}}
  %0 = train.concat %a, %a, %b dim = 1 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x3xbf16> -> tensor<4x7xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<4x2xf32>, %b: tensor<4x2x1xf32>) {
  // expected-error @+1 {{'train.concat' op input #1 of type 'tensor<4x2x1xf32>' does not match input #0 of type 'tensor<4x2xf32>' outside dimension 0}}
  %0 = train.concat %a, %b dim = 0 : tensor<4x2xf32>, tensor<4x2x1xf32> -> tensor<8x2xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.concat' op result type 'tensor<4x6xf32>' does not match the expected 'tensor<4x5xf32>'}}
  %0 = train.concat %a, %b dim = 1 : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @concat_dynamic(%a: tensor<4x2xf32>, %b: tensor<4x?xf32>) {
  // expected-error @+1 {{'train.concat' op operand #1 must have a static shape, got 'tensor<4x?xf32>'}}
  %0 = train.concat %a, %b dim = 1 : tensor<4x2xf32>, tensor<4x?xf32> -> tensor<4x?xf32>
  return
}

// -----

func.func @concat_i32(%a: tensor<4xi32>) {
  // expected-error @+1 {{'train.concat' op operand #0 must be variadic of ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = train.concat %a, %a dim = 0 : tensor<4xi32>, tensor<4xi32> -> tensor<8xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.cross_entropy
//===----------------------------------------------------------------------===//

func.func @cross_entropy_rank(%l: tensor<f32>, %t: tensor<i32>) {
  // expected-error @+1 {{'train.cross_entropy' op logits must have rank >= 1 (the last dimension is the vocabulary)}}
  %0 = train.cross_entropy %l, %t : (tensor<f32>, tensor<i32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_targets(%l: tensor<12x17x65xf32>, %t: tensor<12x17x65xi32>) {
  // expected-error @+1 {{'train.cross_entropy' op targets shape 12x17x65 must equal the logits shape without its last dimension (12x17)}}
  %0 = train.cross_entropy %l, %t : (tensor<12x17x65xf32>, tensor<12x17x65xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_targets_scalar(%l: tensor<8x10xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{'train.cross_entropy' op targets shape scalar must equal the logits shape without its last dimension (8)}}
  %0 = train.cross_entropy %l, %t : (tensor<8x10xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_bf16_loss(%l: tensor<8x10xbf16>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'train.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %0 = train.cross_entropy %l, %t : (tensor<8x10xbf16>, tensor<8xi32>) -> tensor<bf16>
  return
}

// -----

func.func @cross_entropy_ranked_loss(%l: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'train.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<8xf32>'}}
  %0 = train.cross_entropy %l, %t : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<8xf32>
  return
}

// -----

func.func @cross_entropy_float_targets(%l: tensor<8x10xf32>, %t: tensor<8xf32>) {
  // expected-error @+1 {{'train.cross_entropy' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = train.cross_entropy %l, %t : (tensor<8x10xf32>, tensor<8xf32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_smoothing_one(%l: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'train.cross_entropy' op label_smoothing must be in [0, 1), got 1.000000e+00}}
  %0 = train.cross_entropy %l, %t {label_smoothing = 1.0 : f64} : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_smoothing_negative(%l: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'train.cross_entropy' op label_smoothing must be in [0, 1), got -1.000000e-01}}
  %0 = train.cross_entropy %l, %t {ignore_index = 0 : i64, label_smoothing = -0.1 : f64} : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_count_without_ignore(%l: tensor<8x10xf32>, %t: tensor<8xi32>, %n: tensor<f32>) {
  // expected-error @+1 {{'train.cross_entropy' op count divides the sum over the positions that are not ignored, so it needs ignore_index}}
  %0 = train.cross_entropy %l, %t count %n : (tensor<8x10xf32>, tensor<8xi32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_count_type(%l: tensor<8x10xf32>, %t: tensor<8xi32>, %n: tensor<1xf32>) {
  // expected-error @+1 {{'train.cross_entropy' op operand #2 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = train.cross_entropy %l, %t count %n {ignore_index = 0 : i64} : (tensor<8x10xf32>, tensor<8xi32>, tensor<1xf32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_grad_smoothing(%g: tensor<f32>, %l: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op label_smoothing must be in [0, 1), got 1.500000e+00}}
  %0 = train.cross_entropy_grad %g, %l, %t {label_smoothing = 1.5 : f64} : (tensor<f32>, tensor<8x10xf32>, tensor<8xi32>) -> tensor<8x10xf32>
  return
}

// -----

func.func @count_targets_float(%t: tensor<8xf32>) {
  // expected-error @+1 {{'train.count_targets' op operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = train.count_targets %t ignore_index = 0 : tensor<8xf32> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_dynamic(%l: tensor<?x10xf32>, %t: tensor<?xi32>) {
  // expected-error @+1 {{'train.cross_entropy' op operand #0 must have a static shape, got 'tensor<?x10xf32>'}}
  %0 = train.cross_entropy %l, %t : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.sum, train.mean
//===----------------------------------------------------------------------===//

func.func @sum_out_of_range(%x: tensor<12x17x48xf32>) {
  // expected-error @+1 {{'train.sum' op dimension 3 is out of range for rank 3}}
  %0 = train.sum %x dims = [0, 3] : tensor<12x17x48xf32> -> tensor<17x48xf32>
  return
}

// -----

func.func @mean_negative(%x: tensor<12x17x48xf32>) {
  // expected-error @+1 {{'train.mean' op dimension -1 is out of range for rank 3}}
  %0 = train.mean %x dims = [-1] : tensor<12x17x48xf32> -> tensor<12x17xf32>
  return
}

// -----

func.func @sum_duplicate(%x: tensor<12x17x48xf32>) {
  // expected-error @+1 {{'train.sum' op dimension 1 is listed twice}}
  %0 = train.sum %x dims = [1, 0, 1] : tensor<12x17x48xf32> -> tensor<48xf32>
  return
}

// -----

func.func @mean_duplicate(%x: tensor<4x8xbf16>) {
  // expected-error @+1 {{'train.mean' op dimension 0 is listed twice}}
  %0 = train.mean %x dims = [0, 0] : tensor<4x8xbf16> -> tensor<8xbf16>
  return
}

// -----

func.func @sum_result(%x: tensor<12x17x48xf32>) {
  // Reduced dimensions are removed, not kept with size 1.
  // expected-error @+1 {{'train.sum' op result type 'tensor<1x1x48xf32>' does not match the expected 'tensor<48xf32>'}}
  %0 = train.sum %x dims = [0, 1] : tensor<12x17x48xf32> -> tensor<1x1x48xf32>
  return
}

// -----

func.func @mean_result_element(%x: tensor<4x8xbf16>) {
  // expected-error @+1 {{'train.mean' op result type 'tensor<f32>' does not match the expected 'tensor<bf16>'}}
  %0 = train.mean %x dims = [0, 1] : tensor<4x8xbf16> -> tensor<f32>
  return
}

// -----

func.func @sum_dynamic(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.sum' op operand #0 must have a static shape, got 'tensor<?x8xf32>'}}
  %0 = train.sum %x dims = [0] : tensor<?x8xf32> -> tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.cast
//===----------------------------------------------------------------------===//

func.func @cast_shape(%x: tensor<48xf32>) {
  // expected-error @+1 {{'train.cast' op shape changes from 48 to 1x48; a cast keeps the shape}}
  %0 = train.cast %x : tensor<48xf32> to tensor<1x48xbf16>
  return
}

// -----

func.func @cast_shape_to_scalar(%x: tensor<1xbf16>) {
  // expected-error @+1 {{'train.cast' op shape changes from 1 to scalar; a cast keeps the shape}}
  %0 = train.cast %x : tensor<1xbf16> to tensor<f32>
  return
}

// -----

func.func @cast_to_int(%x: tensor<48xf32>) {
  // expected-error @+1 {{'train.cast' op result #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<48xi32>'}}
  %0 = train.cast %x : tensor<48xf32> to tensor<48xi32>
  return
}

// -----

func.func @cast_dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{'train.cast' op operand #0 must have a static shape, got 'tensor<?xf32>'}}
  %0 = train.cast %x : tensor<?xf32> to tensor<?xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.state, train.write
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'train.state' op state @m belongs to @w, which is not a train.param}}
train.state @m : tensor<4xf32> exp_avg of @w

// -----

train.param @w : tensor<4xf32> init = zeros
train.state @m : tensor<4xf32> exp_avg of @w
// A state of a state is rejected.
// expected-error @+1 {{'train.state' op state @v belongs to @m, which is not a train.param}}
train.state @v : tensor<4xf32> exp_avg_sq of @m

// -----

train.param @w : tensor<4xbf16> init = zeros
// expected-error @+1 {{'train.state' op optimizer state is kept in f32, but @w.master has type 'tensor<4xbf16>'}}
train.state @w.master : tensor<4xbf16> master of @w

// -----

train.param @w : tensor<4x8xf32> init = zeros
// expected-error @+1 {{'train.state' op state @m has 16 elements but its parameter @w has 32}}
train.state @m : tensor<2x8xf32> exp_avg of @w

// -----

train.param @w : tensor<4x8xf32> init = zeros
// expected-error @+1 {{'train.state' op type of @m must have a static shape, got 'tensor<?x8xf32>'}}
train.state @m : tensor<?x8xf32> exp_avg of @w

// -----

// expected-error @+1 {{'train.state' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of 32-bit float or bfloat16 type values}}
train.state @step : tensor<i64> master of @w

// -----

train.param @w : tensor<4xf32> init = zeros
func.func @state_in_func() {
  // expected-error @+1 {{'train.state' op expects parent op 'builtin.module'}}
  train.state @m : tensor<4xf32> exp_avg of @w
  return
}

// -----

// expected-error @+1 {{custom op 'train.state' expected string or keyword containing one of the following enum values for attribute 'kind' [master, exp_avg, exp_avg_sq, momentum_buffer, grad]}}
train.state @m : tensor<4xf32> velocity of @w

// -----

func.func @write_missing(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.write' op no train.param, train.state or train.buffer named @w}}
  train.write %x to @w : tensor<4xf32>
  return
}

// -----

train.param @w : tensor<4xbf16> init = zeros
train.state @w.master : tensor<4xf32> master of @w
func.func @write_wrong_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.write' op value type 'tensor<4xf32>' differs from the type 'tensor<4xbf16>' declared by @w}}
  train.write %x to @w : tensor<4xf32>
  return
}

// -----

train.param @w : tensor<4x8xbf16> init = zeros
train.state @w.exp_avg : tensor<32xf32> exp_avg of @w
func.func @write_state_wrong_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.write' op value type 'tensor<4x8xf32>' differs from the type 'tensor<32xf32>' declared by @w.exp_avg}}
  train.write %x to @w.exp_avg : tensor<4x8xf32>
  return
}

// -----

train.param @w : tensor<4xf32> init = zeros
train.state @w.master : tensor<4xf32> master of @w
func.func @read_state_wrong_type() {
  // expected-error @+1 {{'train.read' op result type 'tensor<4xbf16>' differs from the type 'tensor<4xf32>' declared by @w.master}}
  %0 = train.read @w.master : tensor<4xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.broadcast, train.fill, train.sqrt
//===----------------------------------------------------------------------===//

func.func @broadcast_element(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.broadcast' op element type changes from 'f32' to 'bf16'}}
  %0 = train.broadcast %x : tensor<4xf32> -> tensor<3x4xbf16>
  return
}

// -----

func.func @broadcast_incompatible(%x: tensor<17x2xf32>) {
  // expected-error @+1 {{'train.broadcast' op input 17x2 does not broadcast to 12x17x48}}
  %0 = train.broadcast %x : tensor<17x2xf32> -> tensor<12x17x48xf32>
  return
}

// -----

func.func @broadcast_shrinks(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.broadcast' op input 4x3 does not broadcast to 3}}
  %0 = train.broadcast %x : tensor<4x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @broadcast_drops_unit(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{'train.broadcast' op input 1x3 does not broadcast to 3}}
  %0 = train.broadcast %x : tensor<1x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @broadcast_dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{'train.broadcast' op operand #0 must have a static shape, got 'tensor<?xf32>'}}
  %0 = train.broadcast %x : tensor<?xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @fill_int() {
  // expected-error @+1 {{'train.fill' op result #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = train.fill 1.0 : tensor<4xi32>
  return
}

// -----

func.func @sqrt_type_change(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.sqrt' op requires the same type for all operands and results}}
  %0 = "train.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Derivative helpers
//===----------------------------------------------------------------------===//

func.func @embedding_grad_rank(%dx: tensor<12x48xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding_grad' op result must have the table's rank 2 [vocab, dim], got 'tensor<65x48x1xf32>'}}
  %0 = train.embedding_grad %dx[%ids] : (tensor<12x48xf32>, tensor<12xi32>) -> tensor<65x48x1xf32>
  return
}

// -----

func.func @embedding_grad_shape(%dx: tensor<12x17x48xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding_grad' op grad shape 12x17x48 must be the ids shape plus the table's row size (12x48)}}
  %0 = train.embedding_grad %dx[%ids] : (tensor<12x17x48xf32>, tensor<12xi32>) -> tensor<65x48xf32>
  return
}

// -----

func.func @embedding_grad_row(%dx: tensor<12x48xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding_grad' op grad shape 12x48 must be the ids shape plus the table's row size (12x32)}}
  %0 = train.embedding_grad %dx[%ids] : (tensor<12x48xf32>, tensor<12xi32>) -> tensor<65x32xf32>
  return
}

// -----

func.func @embedding_grad_element(%dx: tensor<12x48xbf16>, %ids: tensor<12xi64>) {
  // expected-error @+1 {{'train.embedding_grad' op grad element type 'bf16' differs from the result's 'f32'}}
  %0 = train.embedding_grad %dx[%ids] : (tensor<12x48xbf16>, tensor<12xi64>) -> tensor<65x48xf32>
  return
}

// -----

func.func @embedding_grad_dynamic(%dx: tensor<12x48xf32>, %ids: tensor<12xi32>) {
  // expected-error @+1 {{'train.embedding_grad' op result #0 must have a static shape, got 'tensor<?x48xf32>'}}
  %0 = train.embedding_grad %dx[%ids] : (tensor<12x48xf32>, tensor<12xi32>) -> tensor<?x48xf32>
  return
}

// -----

func.func @gelu_grad_types(%g: tensor<4xf32>, %x: tensor<4xbf16>) {
  // expected-error @+1 {{'train.gelu_grad' op requires the same type for all operands and results}}
  %0 = "train.gelu_grad"(%g, %x) <{approximation = 1 : i32}> : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @relu_grad_types(%g: tensor<4xf32>, %x: tensor<2x2xf32>) {
  // expected-error @+1 {{'train.relu_grad' op requires the same type for all operands and results}}
  %0 = "train.relu_grad"(%g, %x) : (tensor<4xf32>, tensor<2x2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @softmax_grad_rank(%g: tensor<f32>) {
  // expected-error @+1 {{'train.softmax_grad' op grad must have rank >= 1}}
  %0 = train.softmax_grad %g, %g : tensor<f32>
  return
}

// -----

func.func @softmax_grad_types(%g: tensor<4xf32>, %y: tensor<5xf32>) {
  // expected-error @+1 {{'train.softmax_grad' op requires the same type for all operands and results}}
  %0 = "train.softmax_grad"(%g, %y) : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @layernorm_grad_rank(%g: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{'train.layernorm_grad' op input must have rank >= 1}}
  %0:3 = train.layernorm_grad %g, %g, %w eps = 1.0e-5 : (tensor<f32>, tensor<f32>, tensor<1xf32>) -> (tensor<f32>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @layernorm_grad_grad(%g: tensor<4x8xbf16>, %x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm_grad' op grad type 'tensor<4x8xbf16>' differs from input type 'tensor<4x8xf32>'}}
  %0:3 = train.layernorm_grad %g, %x, %w eps = 1.0e-5 : (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @layernorm_grad_weight(%x: tensor<4x8xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'train.layernorm_grad' op weight must have type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0:3 = train.layernorm_grad %x, %x, %w eps = 1.0e-5 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @layernorm_grad_results(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm_grad' op result #1 type 'tensor<4x8xf32>' does not match the expected 'tensor<8xf32>'}}
  %0:3 = train.layernorm_grad %x, %x, %w eps = 1.0e-5 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @layernorm_grad_dynamic(%x: tensor<?x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'train.layernorm_grad' op operand #0 must have a static shape, got 'tensor<?x8xf32>'}}
  %0:3 = train.layernorm_grad %x, %x, %w eps = 1.0e-5 : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @attention_grad_grad(%g: tensor<2x3x5x8xbf16>, %q: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op grad type 'tensor<2x3x5x8xbf16>' differs from query type 'tensor<2x3x5x8xf32>'}}
  %0:3 = train.attention_grad %g, %q, %q, %q scale = 0.25 : (tensor<2x3x5x8xbf16>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>)
  return
}

// -----

func.func @attention_grad_key(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xbf16>, %v: tensor<2x3x7x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op key and value must have one type with the query's element type, got 'tensor<2x3x7x8xbf16>' and 'tensor<2x3x7x8xf32>'}}
  %0:3 = train.attention_grad %q, %q, %k, %v scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x7x8xbf16>, tensor<2x3x7x8xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x3x7x8xbf16>, tensor<2x3x7x8xf32>)
  return
}

// -----

func.func @attention_grad_value(%q: tensor<2x3x5x8xf32>, %v: tensor<2x3x5x4xf32>) {
  // expected-error @+1 {{'train.attention_grad' op key shape 2x3x5x8 differs from value shape 2x3x5x4}}
  %0:3 = train.attention_grad %q, %q, %q, %v scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x4xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x4xf32>)
  return
}

// -----

func.func @attention_grad_rank(%q: tensor<3x5x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op query must have rank 4 [batch, heads, sequence, head_dim], got 3x5x8}}
  %0:3 = train.attention_grad %q, %q, %q, %q scale = 0.25 : (tensor<3x5x8xf32>, tensor<3x5x8xf32>, tensor<3x5x8xf32>, tensor<3x5x8xf32>) -> (tensor<3x5x8xf32>, tensor<3x5x8xf32>, tensor<3x5x8xf32>)
  return
}

// -----

func.func @attention_grad_results(%q: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op result #1 type 'tensor<2x3x5x8xbf16>' does not match the expected 'tensor<2x3x5x8xf32>'}}
  %0:3 = train.attention_grad %q, %q, %q, %q scale = 0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x3x5x8xbf16>, tensor<2x3x5x8xf32>)
  return
}

// -----

func.func @attention_grad_scale(%q: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op scale must be positive, got -2.500000e-01}}
  %0:3 = train.attention_grad %q, %q, %q, %q causal scale = -0.25 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>)
  return
}

// -----

func.func @attention_grad_scale_nan(%q: tensor<2x3x5x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op scale must be finite, got nan}}
  %0:3 = train.attention_grad %q, %q, %q, %q scale = 0x7FF8000000000000 : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>)
  return
}

// -----

func.func @attention_grad_dynamic(%q: tensor<2x3x?x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op operand #0 must have a static shape, got 'tensor<2x3x?x8xf32>'}}
  %0:3 = train.attention_grad %q, %q, %q, %q scale = 0.25 : (tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32>) -> (tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32>, tensor<2x3x?x8xf32>)
  return
}

// -----

func.func @cross_entropy_grad_rank(%one: tensor<f32>, %t: tensor<i32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op logits must have rank >= 1}}
  %0 = train.cross_entropy_grad %one, %one, %t : (tensor<f32>, tensor<f32>, tensor<i32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_grad_targets(%one: tensor<f32>, %l: tensor<12x17x65xf32>, %t: tensor<17xi32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op targets shape 17 must equal the logits shape without its last dimension (12x17)}}
  %0 = train.cross_entropy_grad %one, %l, %t : (tensor<f32>, tensor<12x17x65xf32>, tensor<17xi32>) -> tensor<12x17x65xf32>
  return
}

// -----

func.func @cross_entropy_grad_result(%one: tensor<f32>, %l: tensor<8x10xbf16>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op result type 'tensor<8x10xf32>' does not match the expected 'tensor<8x10xbf16>'}}
  %0 = train.cross_entropy_grad %one, %l, %t : (tensor<f32>, tensor<8x10xbf16>, tensor<8xi32>) -> tensor<8x10xf32>
  return
}

// -----

func.func @cross_entropy_grad_seed(%one: tensor<1xf32>, %l: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op operand #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = train.cross_entropy_grad %one, %l, %t : (tensor<1xf32>, tensor<8x10xf32>, tensor<8xi32>) -> tensor<8x10xf32>
  return
}

// -----

func.func @cross_entropy_grad_dynamic(%one: tensor<f32>, %l: tensor<?x10xf32>, %t: tensor<?xi32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op operand #1 must have a static shape, got 'tensor<?x10xf32>'}}
  %0 = train.cross_entropy_grad %one, %l, %t : (tensor<f32>, tensor<?x10xf32>, tensor<?xi32>) -> tensor<?x10xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Optimizer math
//===----------------------------------------------------------------------===//

func.func @lr_schedule_step(%step: tensor<i32>) {
  // expected-error @+1 {{'train.lr_schedule' op operand #0 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0 = train.lr_schedule %step lr = 0.1 schedule = constant : (tensor<i32>) -> tensor<f32>
  return
}

// -----

func.func @squared_norm_result(%x: tensor<4xbf16>) {
  // expected-error @+1 {{'train.squared_norm' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %0 = train.squared_norm %x : tensor<4xbf16> -> tensor<bf16>
  return
}

// -----

func.func @clip_coef_operand(%n: tensor<1xf32>) {
  // expected-error @+1 {{'train.clip_coef' op operand #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = "train.clip_coef"(%n) <{max_norm = 1.0 : f64}> : (tensor<1xf32>) -> tensor<f32>
  return
}

// -----

func.func @adamw_update_beta1(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op beta1 must be in [0, 1), got 1.000000e+00}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 1.0 beta2 = 0.999 eps = 1.0e-8 weight_decay = 0.0 : tensor<4xf32>
  return
}

// -----

func.func @adamw_update_beta2(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op beta2 must be in [0, 1), got -9.990000e-01}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = -0.999 eps = 1.0e-8 weight_decay = 0.0 : tensor<4xf32>
  return
}

// -----

func.func @adamw_update_eps(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op eps must be positive, got 0.000000e+00}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = 0.999 eps = 0.0 weight_decay = 0.0 : tensor<4xf32>
  return
}

// -----

func.func @adamw_update_weight_decay(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op weight_decay must be non-negative, got -1.000000e-01}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8 weight_decay = -0.1 : tensor<4xf32>
  return
}

// -----

func.func @adamw_update_grad_scale(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+2 {{'train.adamw_update' op operand #6 must be 0D tensor of 32-bit float values}}
  // (The custom form gives grad_scale its type; the generic one can err.)
  %0:3 = "train.adamw_update"(%p, %p, %p, %p, %lr, %step, %p) <{beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, weight_decay = 0.1 : f64}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adamw_update_decay_ranges_odd(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op decay_ranges must hold [begin, end) pairs, got 3 value(s)}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8 weight_decay = 0.1 decay_ranges [0, 2, 4] : tensor<4xf32>
  return
}

// -----

func.func @adamw_update_decay_ranges_overlap(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op decay range #1 is [3, 6): the ranges must be non-empty, sorted, non-negative and not overlap}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8 weight_decay = 0.1 decay_ranges [0, 4, 3, 6] : tensor<4xf32>
  return
}

// -----

func.func @sgd_update_decay_ranges_empty(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'train.sgd_update' op decay range #0 is [2, 2): the ranges must be non-empty, sorted, non-negative and not overlap}}
  %0:2 = train.sgd_update %p, %p, %p, %lr momentum = 0.9 weight_decay = 0.1 decay_ranges [2, 2] : tensor<4xf32>
  return
}

// -----

func.func @sgd_update_decay_ranges_negative(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'train.sgd_update' op decay range #0 is [-1, 2): the ranges must be non-empty, sorted, non-negative and not overlap}}
  %0:2 = train.sgd_update %p, %p, %p, %lr momentum = 0.9 weight_decay = 0.1 decay_ranges [-1, 2] : tensor<4xf32>
  return
}

// -----

func.func @adamw_update_replicated_without_ranges(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op replicated says where decay_ranges' indices start (at 0 on every rank), so it needs decay_ranges}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8 weight_decay = 0.1 replicated : tensor<4xf32>
  return
}

// -----

func.func @sgd_update_replicated_without_ranges(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'train.sgd_update' op replicated says where decay_ranges' indices start (at 0 on every rank), so it needs decay_ranges}}
  %0:2 = train.sgd_update %p, %p, %p, %lr momentum = 0.9 weight_decay = 0.1 replicated : tensor<4xf32>
  return
}

// -----

func.func @sgd_update_decay_ranges_2d(%p: tensor<2x2xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'train.sgd_update' op with decay_ranges updates a shard of a flat buffer, so its operands must be 1-D, got 'tensor<2x2xf32>'}}
  %0:2 = train.sgd_update %p, %p, %p, %lr momentum = 0.9 weight_decay = 0.1 decay_ranges [0, 2] : tensor<2x2xf32>
  return
}

// -----

func.func @adamw_update_nan(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op eps must be finite, got nan}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = 0.999 eps = 0x7FF8000000000000 weight_decay = 0.0 : tensor<4xf32>
  return
}

// -----

func.func @adamw_update_types(%p: tensor<4xf32>, %m: tensor<2x2xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op failed to verify that all of {param, grad, exp_avg, exp_avg_sq, new_param, new_exp_avg, new_exp_avg_sq} have same type}}
  %0:3 = "train.adamw_update"(%p, %p, %m, %p, %lr, %step) <{beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-8 : f64, weight_decay = 0.0 : f64}> : (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adamw_update_bf16(%p: tensor<4xbf16>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<4xbf16>'}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8 weight_decay = 0.0 : tensor<4xbf16>
  return
}

// -----

func.func @adamw_update_dynamic(%p: tensor<?xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'train.adamw_update' op operand #0 must have a static shape, got 'tensor<?xf32>'}}
  %0:3 = train.adamw_update %p, %p, %p, %p, %lr, %step beta1 = 0.9 beta2 = 0.999 eps = 1.0e-8 weight_decay = 0.0 : tensor<?xf32>
  return
}

// -----

func.func @sgd_update_types(%p: tensor<4xf32>, %b: tensor<8xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'train.sgd_update' op failed to verify that all of {param, grad, momentum_buffer, new_param, new_momentum_buffer} have same type}}
  %0:2 = "train.sgd_update"(%p, %p, %b, %lr) <{momentum = 0.9 : f64, weight_decay = 0.0 : f64}> : (tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @lr_schedule_constant_with_warmup(%s: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{'train.lr_schedule' op warmup, min_lr and max_steps belong to the cosine schedule; the constant schedule takes none of them}}
  %lr = train.lr_schedule %s lr = 0.1 schedule = constant warmup = 3 : (tensor<i64>) -> tensor<f32>
  return %lr : tensor<f32>
}

// -----

func.func @lr_schedule_bad_lr(%s: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{'train.lr_schedule' op lr must be positive, got -1.000000e-01}}
  %lr = train.lr_schedule %s lr = -0.1 schedule = constant : (tensor<i64>) -> tensor<f32>
  return %lr : tensor<f32>
}

// -----

func.func @lr_schedule_nan_lr(%s: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{'train.lr_schedule' op lr must be finite, got nan}}
  %lr = train.lr_schedule %s lr = 0x7FF8000000000000 schedule = constant : (tensor<i64>) -> tensor<f32>
  return %lr : tensor<f32>
}

// -----

func.func @lr_schedule_cosine_short(%s: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{'train.lr_schedule' op max_steps (4) must exceed warmup (4)}}
  %lr = train.lr_schedule %s lr = 0.1 schedule = cosine warmup = 4 max_steps = 4 : (tensor<i64>) -> tensor<f32>
  return %lr : tensor<f32>
}

// -----

func.func @lr_schedule_min_lr(%s: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{'train.lr_schedule' op min_lr must be in [0, lr], got 5.000000e-01}}
  %lr = train.lr_schedule %s lr = 0.1 schedule = cosine min_lr = 0.5 max_steps = 10 : (tensor<i64>) -> tensor<f32>
  return %lr : tensor<f32>
}

// -----

func.func @lr_schedule_min_lr_inf(%s: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{'train.lr_schedule' op min_lr must be finite, got inf}}
  %lr = train.lr_schedule %s lr = 0.1 schedule = cosine min_lr = 0x7FF0000000000000 max_steps = 10 : (tensor<i64>) -> tensor<f32>
  return %lr : tensor<f32>
}

// -----

func.func @clip_coef_zero(%n: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'train.clip_coef' op max_norm must be positive, got 0.000000e+00}}
  %c = train.clip_coef %n max_norm = 0.0 : tensor<f32>
  return %c : tensor<f32>
}

// -----

func.func @clip_coef_nan(%n: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'train.clip_coef' op max_norm must be finite, got nan}}
  %c = train.clip_coef %n max_norm = 0x7FF8000000000000 : tensor<f32>
  return %c : tensor<f32>
}

// -----

func.func @sgd_update_momentum(%p: tensor<4xf32>, %lr: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.sgd_update' op momentum must be in [0, 1), got 1.000000e+00}}
  %p1, %b1 = train.sgd_update %p, %p, %p, %lr momentum = 1.0 weight_decay = 0.0 : tensor<4xf32>
  return %p1 : tensor<4xf32>
}

// -----

func.func @sgd_update_momentum_nan(%p: tensor<4xf32>, %lr: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.sgd_update' op momentum must be finite, got nan}}
  %p1, %b1 = train.sgd_update %p, %p, %p, %lr momentum = 0x7FF8000000000000 weight_decay = 0.0 : tensor<4xf32>
  return %p1 : tensor<4xf32>
}

// -----

func.func @sgd_update_decay(%p: tensor<4xf32>, %lr: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.sgd_update' op weight_decay must be non-negative, got -1.000000e-01}}
  %p1, %b1 = train.sgd_update %p, %p, %p, %lr momentum = 0.9 weight_decay = -0.1 : tensor<4xf32>
  return %p1 : tensor<4xf32>
}

// -----

func.func @sgd_update_decay_inf(%p: tensor<4xf32>, %lr: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.sgd_update' op weight_decay must be finite, got inf}}
  %p1, %b1 = train.sgd_update %p, %p, %p, %lr momentum = 0.9 weight_decay = 0x7FF0000000000000 : tensor<4xf32>
  return %p1 : tensor<4xf32>
}

// -----

func.func @sgd_update_dynamic(%p: tensor<?xf32>, %lr: tensor<f32>) -> tensor<?xf32> {
  // expected-error @+1 {{'train.sgd_update' op operand #0 must have a static shape, got 'tensor<?xf32>'}}
  %p1, %b1 = train.sgd_update %p, %p, %p, %lr momentum = 0.9 weight_decay = 0.0 : tensor<?xf32>
  return %p1 : tensor<?xf32>
}
