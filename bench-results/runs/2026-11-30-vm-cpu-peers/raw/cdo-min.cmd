cdo -O -P 2 ydrunmin,11 /tmp/sstclim-peers/cdo/merged.nc /tmp/sstclim-peers/cdo/min.nc
