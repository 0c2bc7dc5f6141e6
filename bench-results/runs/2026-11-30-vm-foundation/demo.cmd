/work/main/target/release/sstclim demo --dir /tmp/sstclim-bench/demo
