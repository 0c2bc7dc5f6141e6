import numpy as np, netCDF4, sys
D0='/tmp/sstclim-cpu360/data'
years=range(1991,2021); days=range(147,249)
# read a band of cells: rows of lat
f=netCDF4.Dataset(f'{D0}/sst_1991_147.nc'); v=[k for k in f.variables if f.variables[k].ndim>=2][0]; shp=f.variables[v].shape; f.close()
print(v,shp)
lat0,lat1=60,100
data=np.empty((len(days),30,lat1-lat0,shp[-1]),dtype=np.float32)
for di,d in enumerate(days):
    for yi,y in enumerate(years):
        with netCDF4.Dataset(f'{D0}/sst_{y}_{d:03d}.nc') as f:
            a=f.variables[v][...]
            a=np.ma.filled(a.astype(np.float64),np.nan).reshape(shp[-2],shp[-1])
            data[di,yi]=a[lat0:lat1]
cells=data.reshape(len(days),30,-1)
ok=~np.isnan(cells).all(axis=(0,1))
cells=cells[:,:,ok]; print('ocean cells',cells.shape[2])
np.save('/tmp/sim/cells.npy',cells)
