bash -c exec cdo -O -P 2 mergetime "$0"/sst_*.nc "$1" /tmp/sstclim-peers/data /tmp/sstclim-peers/cdo/merged.nc
