cdo -O -P 2 ydrunpctl,90,11 /tmp/sstclim-peers/cdo/merged.nc /tmp/sstclim-peers/cdo/min.nc /tmp/sstclim-peers/cdo/max.nc /tmp/sstclim-peers/cdo/p90-default.nc
