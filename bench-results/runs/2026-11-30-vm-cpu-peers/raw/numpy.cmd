python3 scripts/peers_numpy.py /tmp/sstclim-peers/data /tmp/sstclim-peers/out-numpy --years 1991-2020 --doys 152-243
