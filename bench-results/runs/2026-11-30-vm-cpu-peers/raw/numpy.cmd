python3 scripts/peers_numpy.py $SCRATCH/sstclim-peers/data $SCRATCH/sstclim-peers/out-numpy --years 1991-2020 --doys 152-243
