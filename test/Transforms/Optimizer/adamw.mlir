// RUN: zeroc-opt %s --split-input-file --train-optimizer | FileCheck %s

// AdamW on f32 parameters: two moments each, weight decay only where the
// parameter says `decay`, clipping by the global norm, cosine schedule.
module {
  train.optimizer adamw lr = 1.0e-03 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0 schedule = cosine warmup = 2 min_lr = 1.0e-04 max_steps = 10
  train.param @w : tensor<3x2xf32> init = normal std = 2.0e-02 decay
  train.param @b : tensor<3xf32> init = zeros
  func.func @loss_and_grads(%x: tensor<5x2xf32>) -> (tensor<f32>, tensor<3x2xf32>, tensor<3xf32>) attributes {train.gradients = [@w, @b]} {
    %l = train.fill 0.5 : tensor<f32>
    %gw = train.fill 1.0 : tensor<3x2xf32>
    %gb = train.fill 2.0 : tensor<3xf32>
    return %l, %gw, %gb : tensor<f32>, tensor<3x2xf32>, tensor<3xf32>
  }
}
// CHECK:       train.param @w : tensor<3x2xf32>
// CHECK-NEXT:  train.state @w.exp_avg : tensor<3x2xf32> exp_avg of @w
// CHECK-NEXT:  train.state @w.exp_avg_sq : tensor<3x2xf32> exp_avg_sq of @w
// CHECK:       train.param @b : tensor<3xf32>
// CHECK-NEXT:  train.state @b.exp_avg : tensor<3xf32> exp_avg of @b
// CHECK-NEXT:  train.state @b.exp_avg_sq : tensor<3xf32> exp_avg_sq of @b
// CHECK-NOT:   @loss_and_grads
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%{{.*}}: tensor<5x2xf32>, %[[STEP:.*]]: tensor<i64>) -> (tensor<f32>, tensor<f32>) attributes {train.gradients = [@w, @b], train.step}
// CHECK:         %[[LR:.*]] = train.lr_schedule %[[STEP]] lr = 1.000000e-03 schedule = cosine warmup = 2 min_lr = 1.000000e-04 max_steps = 10
// CHECK:         %[[N1:.*]] = train.squared_norm %[[GW:.*]] : tensor<3x2xf32> -> tensor<f32>
// CHECK:         %[[N2:.*]] = train.squared_norm %[[GB:.*]] : tensor<3xf32> -> tensor<f32>
// CHECK:         %[[N:.*]] = train.add %[[N1]], %[[N2]]
// CHECK:         %[[NORM:.*]] = train.sqrt %[[N]] : tensor<f32>
// CHECK:         %[[C:.*]] = train.clip_coef %[[N]] max_norm = 1.000000e+00 : tensor<f32>
// CHECK:         %[[CGW:.*]] = train.mul %[[GW]], %[[C]] : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
// CHECK:         %[[W:.*]] = train.read @w : tensor<3x2xf32>
// CHECK:         %[[M:.*]] = train.read @w.exp_avg
// CHECK:         %[[V:.*]] = train.read @w.exp_avg_sq
// CHECK:         %[[P1:.*]], %[[M1:.*]], %[[V1:.*]] = train.adamw_update %[[W]], %[[CGW]], %[[M]], %[[V]], %[[LR]], %[[STEP]] beta1 = 9.000000e-01 beta2 = {{.*}} eps = 1.000000e-08 weight_decay = 1.000000e-01 : tensor<3x2xf32>
// CHECK:         train.write %[[M1]] to @w.exp_avg
// CHECK:         train.write %[[V1]] to @w.exp_avg_sq
// CHECK:         train.write %[[P1]] to @w : tensor<3x2xf32>
// The bias is not decayed.
// CHECK:         train.adamw_update {{.*}} weight_decay = 0.000000e+00 : tensor<3xf32>
// CHECK:         train.write %{{.*}} to @b : tensor<3xf32>
// CHECK:         return %{{.*}}, %[[NORM]] : tensor<f32>, tensor<f32>

// -----

// bf16 parameters keep an fp32 master copy: the update runs on the master
// and the parameter is written back rounded. Without grad_clip there is no
// clip coefficient.
module {
  train.optimizer adamw lr = 1.0e-03 beta1 = 0.9 beta2 = 0.95 eps = 1.0e-08 weight_decay = 0.1
  train.param @w : tensor<4xbf16> init = ones decay
  func.func @loss_and_grads() -> (tensor<f32>, tensor<4xbf16>) attributes {train.gradients = [@w]} {
    %l = train.fill 0.5 : tensor<f32>
    %g = train.fill 1.0 : tensor<4xbf16>
    return %l, %g : tensor<f32>, tensor<4xbf16>
  }
}
// CHECK:       train.param @w : tensor<4xbf16> init = ones decay
// CHECK-NEXT:  train.state @w.master : tensor<4xf32> master of @w
// CHECK-NEXT:  train.state @w.exp_avg : tensor<4xf32> exp_avg of @w
// CHECK-NEXT:  train.state @w.exp_avg_sq : tensor<4xf32> exp_avg_sq of @w
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[LR:.*]] = train.lr_schedule %{{.*}} lr = 1.000000e-03 schedule = constant
// CHECK:         train.squared_norm %[[G:.*]] : tensor<4xbf16> -> tensor<f32>
// CHECK-NOT:     train.clip_coef
// CHECK:         %[[G32:.*]] = train.cast %[[G]] : tensor<4xbf16> to tensor<4xf32>
// CHECK:         %[[P:.*]] = train.read @w.master : tensor<4xf32>
// CHECK:         %[[P1:.*]], %{{.*}}, %{{.*}} = train.adamw_update %[[P]], %[[G32]]
// CHECK:         train.write %[[P1]] to @w.master : tensor<4xf32>
// CHECK:         %[[P16:.*]] = train.cast %[[P1]] : tensor<4xf32> to tensor<4xbf16>
// CHECK:         train.write %[[P16]] to @w : tensor<4xbf16>
