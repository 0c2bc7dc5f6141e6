cdo -O -P 2 ydrunmax,11 $SCRATCH/sstclim-peers/cdo/merged.nc $SCRATCH/sstclim-peers/cdo/max.nc
