target/release/sstclim generate --output $SCRATCH/sstclim-bench/d360 --grid 360x181 --years 1991-2020 --doys 147-248
