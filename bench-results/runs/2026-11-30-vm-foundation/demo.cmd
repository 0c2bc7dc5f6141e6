target/release/sstclim demo --dir $SCRATCH/sstclim-bench/demo
