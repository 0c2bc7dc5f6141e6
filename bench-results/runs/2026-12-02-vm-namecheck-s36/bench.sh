#!/bin/bash
# alternate old/new binaries on the 92-day reference job (360x181, 1991-2020, 3,060 daily files,
# plain: no time variable; timed: generate --time-dim, a time coordinate in every file)
cd "$(dirname "$0")"
find_disc='import json,sys
def f(o):
    if isinstance(o,dict):
        for k,v in o.items():
            if k=="discover" and isinstance(v,(int,float)): return v
            r=f(v)
            if r is not None: return r
    return None
print(f(json.load(open(sys.argv[1]))))'
for rep in 1 2 3 4; do
  for data in plain timed; do
    for b in old new; do
      bin=../sstclim-$b; [ $b = new ] && bin=../sstclim-new
      rm -rf out-$b-$data
      s=$(date +%s.%N)
      $bin -q run --input "$data" --output out-$b-$data --years 1991-2020 --doys 152-243 --timing-json t.json >/dev/null 2>err.txt || { echo FAIL $b $data; cat err.txt; }
      e=$(date +%s.%N)
      echo "$rep $data $b wall $(echo "$e - $s" | bc) discover $(python3 -c "$find_disc" t.json)"
    done
  done
done
