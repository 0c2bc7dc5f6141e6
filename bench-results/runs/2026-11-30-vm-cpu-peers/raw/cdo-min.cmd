cdo -O -P 2 ydrunmin,11 $SCRATCH/sstclim-peers/cdo/merged.nc $SCRATCH/sstclim-peers/cdo/min.nc
