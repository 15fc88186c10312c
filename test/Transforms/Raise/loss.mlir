// RUN: zeroc-opt %s --split-input-file --train-raise=families=loss | FileCheck %s

// F.cross_entropy through log_softmax and nll_loss (a gather of the
// targets' log-probabilities, their negated mean).
// CHECK-LABEL: func.func @nll
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5xf32>, %[[T:.*]]: tensor<2x3xi32>)
// CHECK-NEXT: %[[L:.*]] = train.cross_entropy %[[X]], %[[T]] : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
// CHECK-NEXT: return %[[L]]
func.func @nll(%x: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<2x3x5xf32>
  %i = train.reshape %t : tensor<2x3xi32> -> tensor<2x3x1xi32>
  %g = train.gather %ls[%i] dim = 2 : (tensor<2x3x5xf32>, tensor<2x3x1xi32>) -> tensor<2x3x1xf32>
  %m = train.mean %g dims = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<f32>
  %l = train.scale %m by -1.0 : tensor<f32>
  return %l : tensor<f32>
}

// -----

// The negation first, the gathered values squeezed to [d...].
// CHECK-LABEL: func.func @negated_first
// CHECK-NEXT: train.cross_entropy
// CHECK-NEXT: return
func.func @negated_first(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %s = train.reshape %g : tensor<6x1xf32> -> tensor<6xf32>
  %z = train.fill 0.0 : tensor<f32>
  %n = train.sub %z, %s : (tensor<f32>, tensor<6xf32>) -> tensor<6xf32>
  %l = train.mean %n dims = [0] : tensor<6xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Near misses, left generic.
// Gathered along the wrong axis.
// CHECK-LABEL: func.func @wrong_axis
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @wrong_axis(%x: tensor<5x5xf32>, %t: tensor<5xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<5x5xf32>
  %i = train.reshape %t : tensor<5xi32> -> tensor<1x5xi32>
  %g = train.gather %ls[%i] dim = 0 : (tensor<5x5xf32>, tensor<1x5xi32>) -> tensor<1x5xf32>
  %m = train.mean %g dims = [0, 1] : tensor<1x5xf32> -> tensor<f32>
  %l = train.scale %m by -1.0 : tensor<f32>
  return %l : tensor<f32>
}

// Not negated (a wrong constant: -0.5).
// CHECK-LABEL: func.func @half
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @half(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %m = train.mean %g dims = [0, 1] : tensor<6x1xf32> -> tensor<f32>
  %l = train.scale %m by -0.5 : tensor<f32>
  return %l : tensor<f32>
}

// label_smoothing = 0.1 with the smoothing term as the mean of every
// log-probability (-0.1 * mean(lp) = 0.1 * mean over positions of
// mean_c(-lp)).
// CHECK-LABEL: func.func @label_smoothing
// CHECK-SAME: (%[[X:.*]]: tensor<6x5xf32>, %[[T:.*]]: tensor<6xi32>)
// CHECK-NEXT: %[[L:.*]] = train.cross_entropy %[[X]], %[[T]] {label_smoothing = 1.000000e-01 : f64} : (tensor<6x5xf32>, tensor<6xi32>) -> tensor<f32>
// CHECK-NEXT: return %[[L]]
func.func @label_smoothing(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %m = train.mean %g dims = [0, 1] : tensor<6x1xf32> -> tensor<f32>
  %nll = train.scale %m by -0.9 : tensor<f32>
  %u = train.mean %ls dims = [0, 1] : tensor<6x5xf32> -> tensor<f32>
  %smooth = train.scale %u by -0.1 : tensor<f32>
  %l = train.add %nll, %smooth : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// A masked mean whose mask is not a comparison of the targets (an
// argument): not an ignore_index.
// CHECK-LABEL: func.func @ignore_index
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @ignore_index(%x: tensor<6x5xf32>, %t: tensor<6xi32>, %keep: tensor<6x1xf32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %kg = train.mul %g, %keep : (tensor<6x1xf32>, tensor<6x1xf32>) -> tensor<6x1xf32>
  %s = train.sum %kg dims = [0, 1] : tensor<6x1xf32> -> tensor<f32>
  %c = train.sum %keep dims = [0, 1] : tensor<6x1xf32> -> tensor<f32>
  %q = train.div %s, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %l = train.scale %q by -1.0 : tensor<f32>
  return %l : tensor<f32>
}

// A mean over part of the positions only.
// CHECK-LABEL: func.func @partial_mean
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @partial_mean(%x: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<2xf32> {
  %ls = train.log_softmax %x : tensor<2x3x5xf32>
  %i = train.reshape %t : tensor<2x3xi32> -> tensor<2x3x1xi32>
  %g = train.gather %ls[%i] dim = 2 : (tensor<2x3x5xf32>, tensor<2x3x1xi32>) -> tensor<2x3x1xf32>
  %m = train.mean %g dims = [1, 2] : tensor<2x3x1xf32> -> tensor<2xf32>
  %l = train.scale %m by -1.0 : tensor<2xf32>
  return %l : tensor<2xf32>
}

// -----

// F.cross_entropy(x, t, ignore_index=2, label_smoothing=0.1) as the ATen
// importer writes it: the NLL's masked mean (a look-up of the targets in a
// constant != vector, a select, the sum over the count), and the smoothing
// term -sum(lp, [1]) zeroed where t == 2 (index_put) then averaged over the
// t != 2 positions (masked_select + mean), weighted 0.9 and 0.1 / 5.
// CHECK-LABEL: func.func @ignore_smoothing
// CHECK-SAME: (%[[X:.*]]: tensor<6x5xf32>, %[[T:.*]]: tensor<6xi32>)
// CHECK-NEXT: %[[L:.*]] = train.cross_entropy %[[X]], %[[T]] {ignore_index = 2 : i64, label_smoothing = 1.000000e-01 : f64} : (tensor<6x5xf32>, tensor<6xi32>) -> tensor<f32>
// CHECK-NEXT: return %[[L]]
func.func @ignore_smoothing(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %gs = train.reshape %g : tensor<6x1xf32> -> tensor<6xf32>
  %nll = train.scale %gs by -1.0 : tensor<6xf32>
  %nec = train.constant dense<[1.0, 1.0, 0.0, 1.0, 1.0]> : tensor<5xf32>
  %keep = train.gather %nec[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %z = train.fill 0.0 : tensor<6xf32>
  %kept = train.select %keep, %nll, %z : tensor<6xf32>
  %s = train.sum %kept dims = [0] : tensor<6xf32> -> tensor<f32>
  %n = train.sum %keep dims = [0] : tensor<6xf32> -> tensor<f32>
  %mean = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %cs = train.sum %ls dims = [1] : tensor<6x5xf32> -> tensor<6xf32>
  %neg = train.neg %cs : tensor<6xf32>
  %eqc = train.constant dense<[0.0, 0.0, 1.0, 0.0, 0.0]> : tensor<5xf32>
  %eq = train.gather %eqc[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %filled = train.select %eq, %z, %neg : tensor<6xf32>
  %one = train.fill 1.0 : tensor<f32>
  %not = train.sub %one, %eq : (tensor<f32>, tensor<6xf32>) -> tensor<6xf32>
  %kept2 = train.select %not, %filled, %z : tensor<6xf32>
  %s2 = train.sum %kept2 dims = [0] : tensor<6xf32> -> tensor<f32>
  %n2 = train.sum %not dims = [0] : tensor<6xf32> -> tensor<f32>
  %m2 = train.div %s2, %n2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = train.scale %mean by 0.9 : tensor<f32>
  %b = train.scale %m2 by 0.02 : tensor<f32>
  %l = train.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// ignore_index alone (F.nll_loss(lp, t, ignore_index=3)), the masking a
// multiplication by the != mask, targets [2, 3] flattened for the look-up.
// CHECK-LABEL: func.func @ignore_only
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5xf32>, %[[T:.*]]: tensor<2x3xi32>)
// CHECK-NEXT: %[[L:.*]] = train.cross_entropy %[[X]], %[[T]] {ignore_index = 3 : i64} : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
// CHECK-NEXT: return %[[L]]
func.func @ignore_only(%x: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<2x3x5xf32>
  %i = train.reshape %t : tensor<2x3xi32> -> tensor<2x3x1xi32>
  %g = train.gather %ls[%i] dim = 2 : (tensor<2x3x5xf32>, tensor<2x3x1xi32>) -> tensor<2x3x1xf32>
  %gs = train.reshape %g : tensor<2x3x1xf32> -> tensor<2x3xf32>
  %nll = train.neg %gs : tensor<2x3xf32>
  %flat = train.reshape %t : tensor<2x3xi32> -> tensor<6xi32>
  %nec = train.constant dense<[1.0, 1.0, 1.0, 0.0, 1.0]> : tensor<5xf32>
  %k = train.gather %nec[%flat] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %keep = train.reshape %k : tensor<6xf32> -> tensor<2x3xf32>
  %kept = train.mul %nll, %keep : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = train.sum %kept dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %n = train.sum %keep dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %l = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Near misses of ignore_index and label_smoothing, left generic.
// Wrong smoothing weights: 0.9 and 0.03 / class (e would be 0.15, and
// 0.9 + 0.15 != 1).
// CHECK-LABEL: func.func @wrong_weights
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @wrong_weights(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %gs = train.reshape %g : tensor<6x1xf32> -> tensor<6xf32>
  %nll = train.scale %gs by -1.0 : tensor<6xf32>
  %nec = train.constant dense<[1.0, 1.0, 0.0, 1.0, 1.0]> : tensor<5xf32>
  %keep = train.gather %nec[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %z = train.fill 0.0 : tensor<6xf32>
  %kept = train.select %keep, %nll, %z : tensor<6xf32>
  %s = train.sum %kept dims = [0] : tensor<6xf32> -> tensor<f32>
  %n = train.sum %keep dims = [0] : tensor<6xf32> -> tensor<f32>
  %mean = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %cs = train.sum %ls dims = [1] : tensor<6x5xf32> -> tensor<6xf32>
  %neg = train.neg %cs : tensor<6xf32>
  %kept2 = train.select %keep, %neg, %z : tensor<6xf32>
  %s2 = train.sum %kept2 dims = [0] : tensor<6xf32> -> tensor<f32>
  %m2 = train.div %s2, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = train.scale %mean by 0.9 : tensor<f32>
  %b = train.scale %m2 by 0.03 : tensor<f32>
  %l = train.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// The positions zeroed (t == 2) are not those counted (t != 3).
// CHECK-LABEL: func.func @other_index
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @other_index(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %gs = train.reshape %g : tensor<6x1xf32> -> tensor<6xf32>
  %nll = train.scale %gs by -1.0 : tensor<6xf32>
  %ne2 = train.constant dense<[1.0, 1.0, 0.0, 1.0, 1.0]> : tensor<5xf32>
  %keep = train.gather %ne2[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %ne3 = train.constant dense<[1.0, 1.0, 1.0, 0.0, 1.0]> : tensor<5xf32>
  %keep3 = train.gather %ne3[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %z = train.fill 0.0 : tensor<6xf32>
  %kept = train.select %keep, %nll, %z : tensor<6xf32>
  %s = train.sum %kept dims = [0] : tensor<6xf32> -> tensor<f32>
  %n = train.sum %keep3 dims = [0] : tensor<6xf32> -> tensor<f32>
  %l = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// The smoothing term zeroed where t == 3 but averaged over t != 2.
// CHECK-LABEL: func.func @other_index_smoothing
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @other_index_smoothing(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %gs = train.reshape %g : tensor<6x1xf32> -> tensor<6xf32>
  %nll = train.scale %gs by -1.0 : tensor<6xf32>
  %nec = train.constant dense<[1.0, 1.0, 0.0, 1.0, 1.0]> : tensor<5xf32>
  %keep = train.gather %nec[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %z = train.fill 0.0 : tensor<6xf32>
  %kept = train.select %keep, %nll, %z : tensor<6xf32>
  %s = train.sum %kept dims = [0] : tensor<6xf32> -> tensor<f32>
  %n = train.sum %keep dims = [0] : tensor<6xf32> -> tensor<f32>
  %mean = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %cs = train.sum %ls dims = [1] : tensor<6x5xf32> -> tensor<6xf32>
  %neg = train.neg %cs : tensor<6xf32>
  %eq3c = train.constant dense<[0.0, 0.0, 0.0, 1.0, 0.0]> : tensor<5xf32>
  %eq3 = train.gather %eq3c[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %filled = train.select %eq3, %z, %neg : tensor<6xf32>
  %kept2 = train.select %keep, %filled, %z : tensor<6xf32>
  %s2 = train.sum %kept2 dims = [0] : tensor<6xf32> -> tensor<f32>
  %m2 = train.div %s2, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = train.scale %mean by 0.9 : tensor<f32>
  %b = train.scale %m2 by 0.02 : tensor<f32>
  %l = train.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// The divisor is the count of the ignored positions (the == mask), not of
// the kept ones.
// CHECK-LABEL: func.func @divisor_not_count
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @divisor_not_count(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %gs = train.reshape %g : tensor<6x1xf32> -> tensor<6xf32>
  %nll = train.scale %gs by -1.0 : tensor<6xf32>
  %eqc = train.constant dense<[0.0, 0.0, 1.0, 0.0, 0.0]> : tensor<5xf32>
  %eq = train.gather %eqc[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %z = train.fill 0.0 : tensor<6xf32>
  %kept = train.select %eq, %z, %nll : tensor<6xf32>
  %s = train.sum %kept dims = [0] : tensor<6xf32> -> tensor<f32>
  %n = train.sum %eq dims = [0] : tensor<6xf32> -> tensor<f32>
  %l = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// A constant divisor (the number of positions) after masking: a sum over
// the kept positions divided by all of them is not PyTorch's mean.
// CHECK-LABEL: func.func @divisor_constant
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @divisor_constant(%x: tensor<6x5xf32>, %t: tensor<6xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<6x5xf32>
  %i = train.reshape %t : tensor<6xi32> -> tensor<6x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<6x5xf32>, tensor<6x1xi32>) -> tensor<6x1xf32>
  %gs = train.reshape %g : tensor<6x1xf32> -> tensor<6xf32>
  %nll = train.scale %gs by -1.0 : tensor<6xf32>
  %nec = train.constant dense<[1.0, 1.0, 0.0, 1.0, 1.0]> : tensor<5xf32>
  %keep = train.gather %nec[%t] dim = 0 : (tensor<5xf32>, tensor<6xi32>) -> tensor<6xf32>
  %z = train.fill 0.0 : tensor<6xf32>
  %kept = train.select %keep, %nll, %z : tensor<6xf32>
  %s = train.mean %kept dims = [0] : tensor<6xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// The smoothing sum over the wrong axis (the positions, not the classes).
// CHECK-LABEL: func.func @smoothing_wrong_axis
// CHECK-NOT: train.cross_entropy
// CHECK: return
func.func @smoothing_wrong_axis(%x: tensor<5x5xf32>, %t: tensor<5xi32>) -> tensor<f32> {
  %ls = train.log_softmax %x : tensor<5x5xf32>
  %i = train.reshape %t : tensor<5xi32> -> tensor<5x1xi32>
  %g = train.gather %ls[%i] dim = 1 : (tensor<5x5xf32>, tensor<5x1xi32>) -> tensor<5x1xf32>
  %gs = train.reshape %g : tensor<5x1xf32> -> tensor<5xf32>
  %nll = train.scale %gs by -1.0 : tensor<5xf32>
  %nec = train.constant dense<[1.0, 1.0, 0.0, 1.0, 1.0]> : tensor<5xf32>
  %keep = train.gather %nec[%t] dim = 0 : (tensor<5xf32>, tensor<5xi32>) -> tensor<5xf32>
  %z = train.fill 0.0 : tensor<5xf32>
  %kept = train.select %keep, %nll, %z : tensor<5xf32>
  %s = train.sum %kept dims = [0] : tensor<5xf32> -> tensor<f32>
  %n = train.sum %keep dims = [0] : tensor<5xf32> -> tensor<f32>
  %mean = train.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %cs = train.sum %ls dims = [0] : tensor<5x5xf32> -> tensor<5xf32>
  %neg = train.neg %cs : tensor<5xf32>
  %kept2 = train.select %keep, %neg, %z : tensor<5xf32>
  %s2 = train.sum %kept2 dims = [0] : tensor<5xf32> -> tensor<f32>
  %m2 = train.div %s2, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = train.scale %mean by 0.9 : tensor<f32>
  %b = train.scale %m2 by 0.02 : tensor<f32>
  %l = train.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
