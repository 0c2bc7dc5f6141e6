../../target/release/sstclim -q bench-write --dir $SCRATCH/sstclim-bench-write --grid 1440x721 --doys 152-243 --tiles 3 --segments 2 --threads 1,2,4 --repeats 3 --json perdoy-3tiles.json
