import numpy as np, netCDF4, sys, os
d=sys.argv[1]; out=sys.argv[2]
rows=None
if len(sys.argv)>3: rows=slice(int(sys.argv[3]),int(sys.argv[4]))
years=range(1991,2021); doys=range(147,249)
pool=None
for di,doy in enumerate(doys):
    for yi,y in enumerate(years):
        f=netCDF4.Dataset(f"{d}/sst_{y}_{doy}.nc")
        v=f.variables['sst']
        v.set_auto_mask(False)
        a=v[0] if v.ndim==3 else v[:]
        if rows is not None: a=a[rows]
        a=np.asarray(a,dtype=np.float32).ravel()
        if pool is None: pool=np.empty((102,30,a.size),np.float32)
        pool[di,yi]=a
        f.close()
np.save(out,pool)
print(pool.shape, np.isnan(pool).mean())
