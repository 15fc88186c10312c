#!/bin/bash
# Usage: scripts/backend-snapshot.sh CHECKOUT OUTDIR
# A regression check for refactors of the back end: the outputs of two checkouts
# (each built in CHECKOUT/build) must be byte-identical.
# Writes the planned IR, the generated C++ and CUDA source and the memory report of
# examples/gpt2-tiny.mlir for stages 0-3 x fp32/bf16 x grad-accum 1/2 x remat none/full
# (world size 2; the CUDA sources at world size 3). Compare two snapshots with: diff -r A B
set -e
wt=$1; out=$2; mkdir -p "$out"
z="$wt/build/bin/zeroc"; m="$wt/examples/gpt2-tiny.mlir"
for s in 0 1 2 3; do for p in fp32 bf16; do for k in 1 2; do for r in none full; do
  n=2; f="$out/s$s-$p-k$k-$r"
  $z $m --zero-stage=$s --world-size=$n --precision=$p --grad-accum=$k --remat=$r --emit=planned -o $f.planned.mlir
  $z $m --zero-stage=$s --world-size=$n --precision=$p --grad-accum=$k --remat=$r --emit=source -o $f.cpp
  $z $m --zero-stage=$s --world-size=$n --precision=$p --grad-accum=$k --remat=$r --emit=memory-report -o $f.json
done; done; done
  $z $m --zero-stage=$s --world-size=3 --target=cuda --emit=source -o $out/s$s-cuda-n3.cu
  $z $m --zero-stage=$s --world-size=3 --target=cuda --precision=bf16 --grad-accum=2 --emit=source -o $out/s$s-cuda-bf16-k2-n3.cu
done
echo "snapshot of $wt written to $out ($(ls $out | wc -l) files)"
