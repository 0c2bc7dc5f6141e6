target/release/sstclim generate --output $SCRATCH/sstclim-bench/full --grid 1440x721 --years 1991-2020 --doys 147-248
