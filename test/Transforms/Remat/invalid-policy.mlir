// A policy other than none, full or selective; checked first, whatever the
// module.
// RUN: zeroc-opt %s --train-remat=policy=bogus --verify-diagnostics
// Policies are lower case.
// RUN: not zeroc-opt %s --train-remat=policy=Full 2>&1 | FileCheck %s --check-prefix=CASE

// CASE: error: train-remat: policy must be none, full or selective, got 'Full'

// expected-error @below {{train-remat: policy must be none, full or selective, got 'bogus'}}
module {
}
