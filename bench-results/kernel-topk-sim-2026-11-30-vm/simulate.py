import numpy as np, sys
cells=np.load('/tmp/sim/cells.npy')  # [day][year][cell]
ndays,ny,nc=cells.shape
h=5; targets=range(5,97)  # day index 5..96 -> doy 152..243
CAP=int(sys.argv[1]); WARP=32
ncell=min(nc,int(sys.argv[2]) if len(sys.argv)>2 else 4096)
rng=np.random.default_rng(1)
def depth(n): # type 5, p=0.9: pos = p*n+0.5 ; lo=floor(pos) ; depth from top = n-lo+1
    lo=int(np.floor(0.9*n+0.5)); lo=min(max(lo,1),n); return n-lo+1
reb=np.zeros(ncell,int); warp_events=0; merged=0
# per cell state
Cs=[None]*ncell; th=[None]*ncell
def build(c,t):
    vals=cells[t-h:t+h+1,:,c]; tags=np.repeat(np.arange(t-h,t+h+1),ny)
    v=vals.ravel(); m=~np.isnan(v); v=v[m]; tg=tags[m]
    o=np.argsort(-v,kind='stable'); v=v[o]; tg=tg[o]
    if len(v)>CAP: theta=v[CAP-1]; v=v[:CAP]; tg=tg[:CAP]
    else: theta=-np.inf
    return [v,tg],theta
for w0 in range(0,ncell,WARP):
    lanes=range(w0,min(w0+WARP,ncell))
    for t in targets:
        need=False
        for c in lanes:
            if t==targets[0]:
                Cs[c],th[c]=build(c,t); continue
            v,tg=Cs[c]; keep=tg!=(t-h-1); v=v[keep]; tg=tg[keep]
            new=cells[t+h,:,c]; new=new[~np.isnan(new)]; new=new[new>th[c]]
            v=np.concatenate([v,new]); tg=np.concatenate([tg,np.full(len(new),t+h)])
            o=np.argsort(-v,kind='stable'); v=v[o]; tg=tg[o]
            merged+=len(v)
            if len(v)>CAP: th[c]=v[CAP-1]; v=v[:CAP]; tg=tg[:CAP]
            Cs[c]=[v,tg]
            n=int((~np.isnan(cells[t-h:t+h+1,:,c])).sum())
            if len(v)<depth(n): need=True
        if need and t!=targets[0]:
            warp_events+=1
            for c in lanes:
                Cs[c],th[c]=build(c,t); 
nw=(ncell+WARP-1)//WARP
print(f'CAP {CAP}: warp rebuild events per warp per target {warp_events/nw/(len(targets)-1):.3f}; mean merge len {merged/ncell/(len(targets)-1):.1f}')
