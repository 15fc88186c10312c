// RUN: not zeroc-opt %s --train-defer-gathers=max-in-flight=0 2>&1 | FileCheck %s
// CHECK: error: max-in-flight must be at least 1, got 0
module attributes {train.zero_stage = 1 : i64} {
}
