// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Round-trip of the reductions and gathers of TrainGenericOps.td (and
// train.embedding's padding_idx), with each piece of optional syntax.

// CHECK-LABEL: func.func @amax(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<2x3x5xbf16>)
// CHECK-NEXT:    %[[Y:.+]] = train.amax %[[X]] dims = [1] : tensor<4x8xf32> -> tensor<4xf32>{{$}}
// CHECK-NEXT:    train.amax %[[X]] dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>{{$}}
// CHECK-NEXT:    train.amax %[[B]] dims = [2, 0] {note} : tensor<2x3x5xbf16> -> tensor<3xbf16>{{$}}
// CHECK-NEXT:    train.amax %[[X]] dims = [] : tensor<4x8xf32> -> tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.amax_grad %[[Y]], %[[X]], %[[Y]] dims = [1] : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>{{$}}
func.func @amax(%x: tensor<4x8xf32>, %b: tensor<2x3x5xbf16>) {
  %0 = train.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %1 = train.amax %x dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %2 = train.amax %b dims = [2, 0] {note} : tensor<2x3x5xbf16> -> tensor<3xbf16>
  %3 = train.amax %x dims = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = train.amax_grad %0, %x, %0 dims = [1] : (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @var(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<2x3x5xbf16>)
// CHECK-NEXT:    train.var %[[X]] dims = [1] correction = 1 : tensor<4x8xf32> -> tensor<4xf32>{{$}}
// CHECK-NEXT:    train.var %[[X]] dims = [0, 1] correction = 0 : tensor<4x8xf32> -> tensor<f32>{{$}}
// CHECK-NEXT:    train.var %[[B]] dims = [2, 0] correction = 9 {note} : tensor<2x3x5xbf16> -> tensor<3xbf16>{{$}}
func.func @var(%x: tensor<4x8xf32>, %b: tensor<2x3x5xbf16>) {
  %0 = train.var %x dims = [1] correction = 1 : tensor<4x8xf32> -> tensor<4xf32>
  %1 = train.var %x dims = [0, 1] correction = 0 : tensor<4x8xf32> -> tensor<f32>
  %2 = train.var %b dims = [2, 0] correction = 9 {note} : tensor<2x3x5xbf16> -> tensor<3xbf16>
  return
}

// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<8xbf16>)
// CHECK-NEXT:    train.log_softmax %[[X]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    train.log_softmax %[[B]] {note} : tensor<8xbf16>{{$}}
func.func @log_softmax(%x: tensor<4x8xf32>, %b: tensor<8xbf16>) {
  %0 = train.log_softmax %x : tensor<4x8xf32>
  %1 = train.log_softmax %b {note} : tensor<8xbf16>
  return
}

// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[I:[a-z0-9_]+]]: tensor<4x1xi32>, %[[L:[a-z0-9_]+]]: tensor<2x8xi64>, %[[B:[a-z0-9_]+]]: tensor<2x3x5xbf16>, %[[J:[a-z0-9_]+]]: tensor<1x7x2xi32>)
// CHECK-NEXT:    %[[Y:.+]] = train.gather %[[X]][%[[I]]] dim = 1 : (tensor<4x8xf32>, tensor<4x1xi32>) -> tensor<4x1xf32>{{$}}
// CHECK-NEXT:    train.gather %[[X]][%[[L]]] dim = 0 : (tensor<4x8xf32>, tensor<2x8xi64>) -> tensor<2x8xf32>{{$}}
// CHECK-NEXT:    train.gather %[[B]][%[[J]]] dim = 1 {note} : (tensor<2x3x5xbf16>, tensor<1x7x2xi32>) -> tensor<1x7x2xbf16>{{$}}
// CHECK-NEXT:    train.gather_grad %[[Y]][%[[I]]] dim = 1 : (tensor<4x1xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>{{$}}
func.func @gather(%x: tensor<4x8xf32>, %i: tensor<4x1xi32>, %l: tensor<2x8xi64>, %b: tensor<2x3x5xbf16>, %j: tensor<1x7x2xi32>) {
  %0 = train.gather %x[%i] dim = 1 : (tensor<4x8xf32>, tensor<4x1xi32>) -> tensor<4x1xf32>
  %1 = train.gather %x[%l] dim = 0 : (tensor<4x8xf32>, tensor<2x8xi64>) -> tensor<2x8xf32>
  %2 = train.gather %b[%j] dim = 1 {note} : (tensor<2x3x5xbf16>, tensor<1x7x2xi32>) -> tensor<1x7x2xbf16>
  %3 = train.gather_grad %0[%i] dim = 1 : (tensor<4x1xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @embedding_padding(
// CHECK-SAME:      %[[T:[a-z0-9_]+]]: tensor<65x48xf32>, %[[I:[a-z0-9_]+]]: tensor<12x17xi32>)
// CHECK-NEXT:    %[[E:.+]] = train.embedding %[[T]][%[[I]]] padding_idx = 0 : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.embedding %[[T]][%[[I]]] padding_idx = 64 {note} : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.embedding %[[T]][%[[I]]] : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>{{$}}
// CHECK-NEXT:    train.embedding_grad %[[E]][%[[I]]] padding_idx = 3 : (tensor<12x17x48xf32>, tensor<12x17xi32>) -> tensor<65x48xf32>{{$}}
// CHECK-NEXT:    train.embedding_grad %[[E]][%[[I]]] : (tensor<12x17x48xf32>, tensor<12x17xi32>) -> tensor<65x48xf32>{{$}}
func.func @embedding_padding(%table: tensor<65x48xf32>, %ids: tensor<12x17xi32>) {
  %0 = train.embedding %table[%ids] padding_idx = 0 : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>
  %1 = train.embedding %table[%ids] padding_idx = 64 {note} : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>
  %2 = train.embedding %table[%ids] : (tensor<65x48xf32>, tensor<12x17xi32>) -> tensor<12x17x48xf32>
  %3 = train.embedding_grad %0[%ids] padding_idx = 3 : (tensor<12x17x48xf32>, tensor<12x17xi32>) -> tensor<65x48xf32>
  %4 = train.embedding_grad %0[%ids] : (tensor<12x17x48xf32>, tensor<12x17xi32>) -> tensor<65x48xf32>
  return
}
