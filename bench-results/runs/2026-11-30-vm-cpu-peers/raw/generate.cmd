target/release/sstclim generate -q --output $SCRATCH/sstclim-peers/data --grid 360x181 --years 1991-2020 --doys 147-248 --time-dim
