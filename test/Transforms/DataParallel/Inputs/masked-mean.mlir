// The model of ignore-index.mlir (a linear classifier, 8 samples of 2
// positions, 3 features, 3 classes, class 0 ignored, labels smoothed by
// 0.1) with its loss written out in generic ops, as the ATen importer
// writes F.cross_entropy(..., ignore_index=0, label_smoothing=0.1) and
// train-raise is not run: two masked means, each
// sum(select(mask, x, 0)) / sum(mask) with the mask a look-up of the
// targets in a constant vector (t != 0; 1 - (t == 0)), weighted 0.9 (the
// NLL) and 0.1 / 3 (the sum over the classes). The zeros both selects
// read are one train.fill.
module {
  train.optimizer adamw lr = 5.0e-02 beta1 = 0.9 beta2 = 0.99 eps = 1.0e-08 weight_decay = 0.1 grad_clip = 1.0
  train.param @w : tensor<3x3xf32> init = normal std = 0.5 decay
  train.param @b : tensor<3xf32> init = zeros
  func.func @forward(%x: tensor<8x2x3xf32>, %y: tensor<8x2xi32>) -> tensor<f32> attributes {train.forward} {
    %w = train.read @w : tensor<3x3xf32>
    %b = train.read @b : tensor<3xf32>
    %l0 = train.matmul %x, %w transpose_rhs : (tensor<8x2x3xf32>, tensor<3x3xf32>) -> tensor<8x2x3xf32>
    %l = train.add %l0, %b : (tensor<8x2x3xf32>, tensor<3xf32>) -> tensor<8x2x3xf32>
    %lf = train.reshape %l : tensor<8x2x3xf32> -> tensor<16x3xf32>
    %t = train.reshape %y : tensor<8x2xi32> -> tensor<16xi32>
    %ls = train.log_softmax %lf : tensor<16x3xf32>
    %t1 = train.reshape %t : tensor<16xi32> -> tensor<16x1xi32>
    %g = train.gather %ls[%t1] dim = 1 : (tensor<16x3xf32>, tensor<16x1xi32>) -> tensor<16x1xf32>
    %gs = train.reshape %g : tensor<16x1xf32> -> tensor<16xf32>
    %nll = train.scale %gs by -1.0 : tensor<16xf32>
    %nec = train.constant dense<[0.0, 1.0, 1.0]> : tensor<3xf32>
    %keep = train.gather %nec[%t] dim = 0 : (tensor<3xf32>, tensor<16xi32>) -> tensor<16xf32>
    %z = train.fill 0.0 : tensor<16xf32>
    %kept = train.select %keep, %nll, %z : tensor<16xf32>
    %s = train.sum %kept dims = [0] : tensor<16xf32> -> tensor<f32>
    %n = train.sum %keep dims = [0] : tensor<16xf32> -> tensor<f32>
    %mean = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cs = train.sum %ls dims = [1] : tensor<16x3xf32> -> tensor<16xf32>
    %neg = train.neg %cs : tensor<16xf32>
    %eqc = train.constant dense<[1.0, 0.0, 0.0]> : tensor<3xf32>
    %eq = train.gather %eqc[%t] dim = 0 : (tensor<3xf32>, tensor<16xi32>) -> tensor<16xf32>
    %filled = train.select %eq, %z, %neg : tensor<16xf32>
    %one = train.fill 1.0 : tensor<f32>
    %not = train.sub %one, %eq : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
    %kept2 = train.select %not, %filled, %z : tensor<16xf32>
    %s2 = train.sum %kept2 dims = [0] : tensor<16xf32> -> tensor<f32>
    %n2 = train.sum %not dims = [0] : tensor<16xf32> -> tensor<f32>
    %m2 = train.div %s2, %n2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %a = train.scale %mean by 0.9 : tensor<f32>
    %c = train.scale %m2 by 0.033333333333333333 : tensor<f32>
    %loss = train.add %a, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}
