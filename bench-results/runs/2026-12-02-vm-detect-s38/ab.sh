#!/bin/bash
# bench-detect A/B on the dev VM: binaries given as NAME=PATH pairs, alternated, REPEATS rounds,
# the default band (65,160 cells x 41 years, heat and cold) and the nearly event-free one
# (--threshold-offset 3.5: the scan alone). Usage: bash ab.sh REPEATS old=/path/a new=/path/b
R=$1; shift
date -u; uptime
for r in $(seq 1 $R); do
  for pair in "$@"; do
    name=${pair%%=*}; bin=${pair#*=}
    for o in 1.0 3.5; do
      echo "$name off $o $($bin bench-detect --cells 65160 --years 41 --repeats 3 --threshold-offset $o 2>&1 | sed -n 2,3p | tr '\n' ' ')"
    done
  done
done
