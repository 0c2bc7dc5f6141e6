cdo -O -P 2 ydrunmean,11 /tmp/sstclim-peers/cdo/merged.nc /tmp/sstclim-peers/cdo/mean.nc
