cdo -O -P 2 ydrunmean,11 $SCRATCH/sstclim-peers/cdo/merged.nc $SCRATCH/sstclim-peers/cdo/mean.nc
