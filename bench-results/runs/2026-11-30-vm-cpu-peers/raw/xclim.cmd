python3 scripts/peers_xclim.py /tmp/sstclim-peers/data /tmp/sstclim-peers/out-xclim --doys 152-243 --lat-chunk 10
