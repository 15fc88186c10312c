// RUN: zeroc-opt %s --train-elide-copies | FileCheck %s

// A module without a single train op (the dialect is not loaded by the
// parser): the pass leaves it as it is (it used to crash, asking the
// unloaded train dialect for its attributes).

// CHECK-LABEL: func.func @no_train_ops
// CHECK-NEXT: arith.addf
// CHECK-NEXT: return
func.func @no_train_ops(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}

// CHECK-LABEL: func.func private @external
func.func private @external(f32) -> f32
