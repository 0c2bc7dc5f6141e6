../../target/release/sstclim -q bench-write --dir $SCRATCH/sstclim-bench-write --grid 1440x721 --doys 152-243 --tiles 1 --segments 2 --threads 1,2,4 --repeats 5 --json perdoy-1tile.json
