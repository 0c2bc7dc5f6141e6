bash -c exec cdo -O -P 2 mergetime "$0"/sst_*.nc "$1" $SCRATCH/sstclim-peers/data $SCRATCH/sstclim-peers/cdo/merged.nc
