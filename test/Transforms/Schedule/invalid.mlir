// RUN: not zeroc-opt %s --train-schedule=max-in-flight=0 2>&1 | FileCheck %s
// CHECK: error: max-in-flight must be at least 1, got 0
module {
}
