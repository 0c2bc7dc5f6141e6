cdo -O -P 2 ydrunmax,11 /tmp/sstclim-peers/cdo/merged.nc /tmp/sstclim-peers/cdo/max.nc
