// RUN: zeroc-opt %s --train-optimizer | FileCheck %s

// SGD keeps one momentum buffer per parameter.
module {
  train.optimizer sgd lr = 1.0e-01 momentum = 0.9 weight_decay = 0.01
  train.param @w : tensor<3x2xf32> init = normal std = 2.0e-02 decay
  func.func @loss_and_grads() -> (tensor<f32>, tensor<3x2xf32>) attributes {train.gradients = [@w]} {
    %l = train.fill 0.5 : tensor<f32>
    %g = train.fill 1.0 : tensor<3x2xf32>
    return %l, %g : tensor<f32>, tensor<3x2xf32>
  }
}
// CHECK:       train.state @w.momentum_buffer : tensor<3x2xf32> momentum_buffer of @w
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[LR:.*]] = train.lr_schedule
// CHECK:         %[[P:.*]] = train.read @w : tensor<3x2xf32>
// CHECK:         %[[B:.*]] = train.read @w.momentum_buffer
// CHECK:         %[[P1:.*]], %[[B1:.*]] = train.sgd_update %[[P]], %{{.*}}, %[[B]], %[[LR]] momentum = 9.000000e-01 weight_decay = 1.000000e-02 : tensor<3x2xf32>
// CHECK:         train.write %[[B1]] to @w.momentum_buffer
// CHECK:         train.write %[[P1]] to @w
