import numpy as np, sys
pool=np.load(sys.argv[1], mmap_mode='r')
W=32
lim=int(sys.argv[2]); off=int(sys.argv[3]) if len(sys.argv)>3 else 0
pool=np.array(pool[:,:,off:off+lim]); C=pool.shape[2]; C-=C%W; pool=pool[:,:,:C]
xr=np.full((92,C),np.nan,np.float32); rr=np.zeros((92,C),int); nn=np.zeros((92,C),int)
for t in range(92):
    win=pool[t:t+11].reshape(330,C); s=np.sort(win,axis=0); n=(~np.isnan(win)).sum(0)
    r=np.minimum(np.clip(np.floor(0.9*n+0.5).astype(int),1,None),np.maximum(n,1))
    xr[t]=np.where(n>0, s[np.maximum(r-1,0),np.arange(C)], np.nan); rr[t]=r; nn[t]=n
def cnt(d,h): return (pool[d]<=h[None,:]).sum(0)
def run(name, hintf):
    sw=[];mw=[];sc=[];up=[]
    state={}
    for t in range(1,92):
        prev=xr[t-1]
        h=hintf(t,state); h=np.where(np.isnan(h),prev,h)
        below=np.zeros(C,int); moves=np.zeros((10,C),int)
        for j in range(11):
            c=cnt(t+j,h); below+=c
            if j<10: moves[j]=np.abs(c-cnt(t+j,prev))
        n=nn[t]; r=rr[t]; down=r<=below
        st=np.where(down,below-r+1,r-below); full=np.minimum(n-r+1,r); st=np.minimum(st,full)
        act=(n>0)&~np.isnan(prev); st=np.where(act,st,0); moves=np.where(act[None,:],moves,0)
        sc.append(st[act]); up.append(~down[act])
        wa=act.reshape(-1,W).any(1)
        sw.append(st.reshape(-1,W).max(1)[wa]); mw.append(moves.reshape(10,-1,W).max(2).sum(0)[wa])
    sw=np.concatenate(sw);mw=np.concatenate(mw);sc=np.concatenate(sc);up=np.concatenate(up)
    print(f"{name:14s} cell steps mean {sc.mean():5.2f} p90 {np.percentile(sc,90):3.0f} up {up.mean():.2f} | warp max steps {sw.mean():5.2f} moves {mw.mean():5.2f} | ALU~ {190+51*sw.mean()+3*mw.mean():.0f}")
run("prev", lambda t,s: xr[t-1].copy())
for a in (0.25,0.5):
    run(f"lin a={a}", lambda t,s,a=a: xr[t-1]+a*(xr[t-1]-xr[t-2]) if t>=2 else xr[t-1].copy())
for b in (0.5,0.8):
  def f(t,s,b=b):
    if t<2: s['d']=np.zeros(C,np.float32); return xr[t-1].copy()
    dd=np.nan_to_num(xr[t-1]-xr[t-2]); s['d']=b*s['d']+(1-b)*dd; return xr[t-1]+s['d']
  run(f"ema b={b}",f)
