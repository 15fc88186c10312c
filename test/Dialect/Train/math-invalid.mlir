// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Every diagnostic the verifiers and type rules of TrainMathOps.td emit, one
// case per split, then the constraint errors ODS generates for them.

//===----------------------------------------------------------------------===//
// train.pow
//===----------------------------------------------------------------------===//

func.func @pow_nan(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.pow' op exponent must be finite, got nan}}
  %0 = train.pow %x by 0x7FF8000000000000 : tensor<4xf32>
  return
}

// -----

func.func @pow_inf(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.pow' op exponent must be finite, got inf}}
  %0 = train.pow %x by 0x7FF0000000000000 : tensor<4xf32>
  return
}

// -----

func.func @pow_minus_inf(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.pow' op exponent must be finite, got -inf}}
  %0 = train.pow %x by 0xFFF0000000000000 : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.compare
//===----------------------------------------------------------------------===//

func.func @compare_shapes(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'train.compare' op rhs type 'tensor<8xf32>' differs from lhs type 'tensor<4x8xf32>' (broadcast the operands to one shape first)}}
  %0 = "train.compare"(%a, %b) <{predicate = 2 : i32}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @compare_element(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'train.compare' op rhs type 'tensor<4xbf16>' differs from lhs type 'tensor<4xf32>' (broadcast the operands to one shape first)}}
  %0 = "train.compare"(%a, %b) <{predicate = 0 : i32}> : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @compare_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{'train.compare' op result type 'tensor<4xbf16>' does not match the expected 'tensor<4xf32>'}}
  %0 = "train.compare"(%a, %a) <{predicate = 0 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xbf16>
  return
}

// -----

func.func @compare_predicate(%a: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'train.compare' expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = train.compare %a, %a below : tensor<4xf32>
  return
}

// -----

func.func @compare_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{'train.compare' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = train.compare %a, %a lt : tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.select
//===----------------------------------------------------------------------===//

func.func @select_mask(%m: tensor<4x1xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.select' op mask type 'tensor<4x1xf32>' differs from on_true type 'tensor<4x8xf32>' (broadcast the operands to one shape first)}}
  %0 = "train.select"(%m, %a, %a) : (tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @select_on_false(%a: tensor<4x8xf32>, %b: tensor<4x8xbf16>) {
  // expected-error @+1 {{'train.select' op on_false type 'tensor<4x8xbf16>' differs from on_true type 'tensor<4x8xf32>' (broadcast the operands to one shape first)}}
  %0 = "train.select"(%a, %a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @select_result(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.select' op result type 'tensor<8x4xf32>' does not match the expected 'tensor<4x8xf32>'}}
  %0 = "train.select"(%a, %a, %a) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.tril, train.triu
//===----------------------------------------------------------------------===//

func.func @tril_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{'train.tril' op input must have rank >= 2 (the mask acts on its last two dimensions), got 'tensor<8xf32>'}}
  %0 = train.tril %x diagonal = 0 : tensor<8xf32>
  return
}

// -----

func.func @triu_rank(%x: tensor<f32>) {
  // expected-error @+1 {{'train.triu' op input must have rank >= 2 (the mask acts on its last two dimensions), got 'tensor<f32>'}}
  %0 = train.triu %x diagonal = 1 : tensor<f32>
  return
}

// -----

func.func @tril_type_change(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.tril' op requires the same type for all operands and results}}
  %0 = "train.tril"(%x) <{diagonal = 0 : i64}> : (tensor<4x4xf32>) -> tensor<4x4xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.constant
//===----------------------------------------------------------------------===//

func.func @constant_result() {
  // expected-error @+1 {{'train.constant' op result type 'tensor<4xf32>' does not match the expected 'tensor<2x2xf32>'}}
  %0 = "train.constant"() <{value = dense<1.0> : tensor<2x2xf32>}> : () -> tensor<4xf32>
  return
}

// -----

func.func @constant_not_dense() {
  // expected-error @+1 {{'train.constant' op value must be a dense<...> tensor attribute, got dense_resource<blob> : tensor<4xf32>}}
  %0 = "train.constant"() <{value = dense_resource<blob> : tensor<4xf32>}> : () -> tensor<4xf32>
  return
}

// -----

func.func @constant_f16() {
  // expected-error @+1 {{'train.constant' op result #0 must be ranked tensor of 32-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf16>'}}
  %0 = train.constant dense<[1.0, 2.0]> : tensor<2xf16>
  return
}

// -----

func.func @constant_i1() {
  // expected-error @+1 {{'train.constant' op result #0 must be ranked tensor of 32-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xi1>'}}
  %0 = train.constant dense<[true, false]> : tensor<2xi1>
  return
}

// -----

func.func @constant_empty() {
  // expected-error @+1 {{'train.constant' op result #0 has a zero-sized dimension, got 'tensor<0xf32>'; train ops need every dimension to be at least 1}}
  %0 = train.constant dense<> : tensor<0xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// ODS constraints of the unary functions
//===----------------------------------------------------------------------===//

func.func @exp_type_change(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.exp' op requires the same type for all operands and results}}
  %0 = "train.exp"(%x) : (tensor<4xf32>) -> tensor<4xbf16>
  return
}

// -----

func.func @log_int(%x: tensor<4xi64>) {
  // expected-error @+1 {{'train.log' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi64>'}}
  %0 = train.log %x : tensor<4xi64>
  return
}

// -----

func.func @pow_no_exponent(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.pow' op requires attribute 'exponent'}}
  %0 = "train.pow"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @erf_type_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.erf' op requires the same type for all operands and results}}
  %0 = "train.erf"(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @erf_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'train.erf' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = train.erf %x : tensor<4xi32>
  return
}
