python3 scripts/peers_xclim.py $SCRATCH/sstclim-peers/data $SCRATCH/sstclim-peers/out-xclim --doys 152-243 --lat-chunk 10
