//===- RaiseActivations.cpp - SiLU and GELU to train.silu / train.gelu ----===//

#include "Raise.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace zeroc::train;

void zeroc::raise::populateActivationPatterns(RewritePatternSet &) {}
