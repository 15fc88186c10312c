// RUN: zeroc-opt %s --train-deallocate -split-input-file -verify-diagnostics

// Every error of train-deallocate.

func.func @placed(%out: memref<f32, #train.host>) attributes {train.planned} {
  %a = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
  // expected-error @+1 {{'memref.dealloc' op is already placed; train-deallocate places every deallocation itself}}
  memref.dealloc %a : memref<f32>
  return
}

// -----

func.func @returned() -> memref<f32> attributes {train.planned} {
  // expected-error @+1 {{'memref.alloc' op is returned; a planned function hands its results back through host out-parameters}}
  %a = memref.alloc() {train.category = #train.category<activations>} : memref<f32>
  return %a : memref<f32>
}
