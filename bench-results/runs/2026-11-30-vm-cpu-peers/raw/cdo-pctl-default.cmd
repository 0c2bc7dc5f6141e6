cdo -O -P 2 ydrunpctl,90,11 $SCRATCH/sstclim-peers/cdo/merged.nc $SCRATCH/sstclim-peers/cdo/min.nc $SCRATCH/sstclim-peers/cdo/max.nc $SCRATCH/sstclim-peers/cdo/p90-default.nc
