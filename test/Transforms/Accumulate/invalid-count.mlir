// RUN: zeroc-opt %s --train-accumulate=micro-batches=-1 --verify-diagnostics

// expected-error @below {{train-accumulate: micro-batches must be at least 1 (0 takes the module's train.micro_batches), got -1}}
module {
}
