// train.reshape to and from a 0-d tensor (tensor<f32> -> tensor<1xf32> ->
// tensor<f32>) used to read past the shape when passes retyped it, in fp32
// and bf16; the whole pipeline now compiles such a model.
//
// RUN: zeroc-opt %s --train-data-parallel=world-size=2 | FileCheck %s
// RUN: zeroc-opt %s --train-mixed-precision | FileCheck %s --check-prefix=BF16
// RUN: zeroc %s --zero-stage=2 --world-size=2 --emit=mlir -o - | FileCheck %s --check-prefix=PIPELINE
// RUN: zeroc %s --zero-stage=3 --world-size=2 --precision=bf16 --emit=mlir -o - | FileCheck %s --check-prefix=PIPELINE
// RUN: zeroc %s --zero-stage=1 --world-size=2 --emit=source -o - | FileCheck %s --check-prefix=SOURCE

// CHECK-LABEL: func.func @forward
// CHECK: train.reshape %{{.*}} : tensor<f32> -> tensor<1xf32>
// CHECK: train.mul %{{.*}}, %{{.*}} : (tensor<2x5x8xf32>, tensor<1xf32>) -> tensor<2x5x8xf32>
// CHECK: train.cross_entropy %{{.*}}, %{{.*}} : (tensor<2x5x8xf32>, tensor<2x5xi32>) -> tensor<f32>
// CHECK: train.reshape %{{.*}} : tensor<f32> -> tensor<1xf32>
// CHECK: train.reshape %{{.*}} : tensor<1xf32> -> tensor<f32>

// BF16: train.param @scale : tensor<bf16> init = ones
// BF16: train.reshape %{{.*}} : tensor<bf16> -> tensor<1xbf16>
// BF16: train.cross_entropy %{{.*}}, %{{.*}} : (tensor<4x5x8xbf16>, tensor<4x5xi32>) -> tensor<f32>
// BF16: train.reshape %{{.*}} : tensor<f32> -> tensor<1xf32>
// BF16: train.reshape %{{.*}} : tensor<1xf32> -> tensor<f32>

// PIPELINE: func.func @train_step
// SOURCE: zeroc_program

module {
  train.optimizer sgd lr = 0.1
  train.param @scale : tensor<f32> init = ones
  train.param @table : tensor<8x8xf32> init = normal std = 0.5
  func.func @forward(%tokens: tensor<4x5xi32>, %targets: tensor<4x5xi32>) -> tensor<f32> attributes {train.forward} {
    %t = train.read @table : tensor<8x8xf32>
    %x = train.embedding %t[%tokens] : (tensor<8x8xf32>, tensor<4x5xi32>) -> tensor<4x5x8xf32>
    %s = train.read @scale : tensor<f32>
    %s1 = train.reshape %s : tensor<f32> -> tensor<1xf32>
    %y = train.mul %x, %s1 : (tensor<4x5x8xf32>, tensor<1xf32>) -> tensor<4x5x8xf32>
    %l = train.cross_entropy %y, %targets : (tensor<4x5x8xf32>, tensor<4x5xi32>) -> tensor<f32>
    %l1 = train.reshape %l : tensor<f32> -> tensor<1xf32>
    %l0 = train.reshape %l1 : tensor<1xf32> -> tensor<f32>
    return %l0 : tensor<f32>
  }
}
