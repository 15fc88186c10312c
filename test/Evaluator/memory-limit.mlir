// The evaluator refuses, with a message naming the op, what would not fit
// its memory limit (zeroc-run --max-memory, in MiB; default half the
// machine's memory), before allocating anything: large dimensions used to
// end in `LLVM ERROR: out of memory` or std::length_error.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not zeroc-run %t/big.mlir --max-memory=64 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: big.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'train.matmul' op its results would need 128.00 GiB, and the evaluator holds {{[0-9.]+}} GiB already: over its memory limit of 0.06 GiB (8 bytes per element and rank; zeroc-run --max-memory)
// BIG: zeroc-run: evaluation of @forward failed at step 0
//
// Upstream ops are not bound by the train dialect's 2^48 elements: an
// arith.constant or tensor.splat of 2^50 elements is refused as well.
// RUN: not zeroc-run %t/splat.mlir 2>&1 | FileCheck %s --check-prefix=SPLAT
// SPLAT: splat.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'tensor.splat' op result type 'tensor<1125899906842624xf32>' is not supported by the reference evaluator (static tensors and scalars of f32, bf16, f64, i1, i32, i64, index, of at most 2^48 elements)
//
// Parameters count against the limit too, on every simulated rank.
// RUN: not zeroc-run %t/param.mlir --max-memory=1 --ranks=4 2>&1 | FileCheck %s --check-prefix=PARAM
// PARAM: param.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'train.param' op its value on every rank would need 0.03 GiB
//
// An input of that size fails before the step.
// RUN: not zeroc-run %t/input.mlir --max-memory=1 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: zeroc-run: argument #0 of @forward (tensor<4096x4096xf32>): 16777216 elements do not fit the evaluator's memory limit (zeroc-run --max-memory)
//
// Within the limit the same kind of program runs.
// RUN: zeroc-run %t/small.mlir --max-memory=1 | FileCheck %s --check-prefix=SMALL
// SMALL: "entry": "forward"

//--- big.mlir
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<f32> attributes {train.forward} {
    %a = train.fill 1.0 : tensor<131072x8xf32>
    %b = train.fill 1.0 : tensor<131072x8xf32>
    %c = train.matmul %a, %b transpose_rhs : (tensor<131072x8xf32>, tensor<131072x8xf32>) -> tensor<131072x131072xf32>
    %m = train.mean %c dims = [0, 1] : tensor<131072x131072xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

//--- splat.mlir
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {train.forward} {
    %one = arith.constant 1.0 : f32
    %s = tensor.splat %one : tensor<1125899906842624xf32>
    %m = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

//--- param.mlir
module {
  train.param @w : tensor<1024x1024xf32> init = zeros
  func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {train.forward} {
    %m = train.mean %x dims = [0] : tensor<4xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

//--- input.mlir
module {
  func.func @forward(%x: tensor<4096x4096xf32>) -> tensor<f32> attributes {train.forward} {
    %m = train.mean %x dims = [0, 1] : tensor<4096x4096xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}

//--- small.mlir
module {
  func.func @forward(%x: tensor<64x64xf32>) -> tensor<f32> attributes {train.forward} {
    %c = train.matmul %x, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %m = train.mean %c dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
    return %m : tensor<f32>
  }
}
