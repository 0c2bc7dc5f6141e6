// Per-plane coding benchmark (README.md here): src/main.rs of a crate with planes-bench.Cargo.toml;
// the #[path] points at a checkout's src/output/rle_deflate.rs. Usage: K=16 mb FILES (raw
// little-endian float32 day fields of 181x360, K of them to a chunk).
#[path = "/work/wt/h28/src/output/rle_deflate.rs"]
#[allow(dead_code)]
mod rle_deflate;
use std::time::Instant;
fn shuffle4(d: &[u8]) -> Vec<u8> { let n = d.len()/4; let mut o = vec![0u8; d.len()]; for i in 0..n { for b in 0..4 { o[b*n+i] = d[i*4+b]; } } o }
fn entropy(bytes: &[u8]) -> f64 { let mut c=[0u32;256]; for &b in bytes { c[b as usize]+=1; } let n=bytes.len() as f64; c.iter().filter(|&&x|x>0).map(|&x| x as f64/n).map(|p| -p*p.log2()).sum() }
fn planes(c: &mut libdeflater::Compressor, raw: &[u8], nruns: usize, out: &mut Vec<u8>, tokens: &mut Vec<u32>) {
    let n = raw.len()/4;
    let mut w = rle_deflate::BitWriter::new(std::mem::take(out));
    w.out.clear();
    w.out.extend_from_slice(&[0x78, 0x01]);
    for k in 0..nruns { w.runs_and_huffman(&raw[k*n..(k+1)*n], tokens); }
    let rest = &raw[nruns*n..];
    if rest.is_empty() { w.empty_stored(true); let mut o = w.out; o.extend_from_slice(&libdeflater::adler32(raw).to_be_bytes()); *out = o; return; }
    if !w.aligned() { w.empty_stored(false); }
    let mut o = w.out; let at = o.len();
    o.resize(at + c.deflate_compress_bound(rest.len()), 0);
    let len = c.deflate_compress(rest, &mut o[at..]).unwrap(); o.truncate(at+len);
    o.extend_from_slice(&libdeflater::adler32(raw).to_be_bytes());
    *out = o;
}
fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let mut raw = Vec::new();
    for f in &files { raw.extend(std::fs::read(f).unwrap()); }
    let k: usize = std::env::var("K").map(|v| v.parse().unwrap()).unwrap_or(1); let csz = 181*360*4*k;
    let chunks: Vec<&[u8]> = raw.chunks(csz).collect();
    let sh: Vec<Vec<u8>> = chunks.iter().map(|c| shuffle4(c)).collect();
    let n = csz/4;
    for p in 0..4 { let e: f64 = sh.iter().map(|s| entropy(&s[p*n..(p+1)*n])).sum::<f64>()/sh.len() as f64; print!("plane{p} H={e:.3} "); }
    println!();
    let total = raw.len() as f64;
    let reps = 20;
    let mut d = libdeflater::Decompressor::new();
    let mut back = vec![0u8; csz];
    for round in 0..2 {
    for lvl in [1] {
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(lvl).unwrap());
        let mut out = Vec::new(); let mut tokens = Vec::new();
        for nruns in [0usize, 2, 3, 4] {
            let t = Instant::now(); let mut sz = 0;
            for _ in 0..reps { sz = 0; for s in &sh { planes(&mut c, s, nruns, &mut out, &mut tokens); sz += out.len(); } }
            let dt = t.elapsed().as_secs_f64()/reps as f64;
            for s in &sh { planes(&mut c, s, nruns, &mut out, &mut tokens); assert_eq!(d.zlib_decompress(&out, &mut back).unwrap(), csz); assert_eq!(&back, s); }
            println!("r{round} L{lvl} runs-planes {nruns}: {:.1} MB/s of chunk bytes, ratio {:.3}", total/dt/1e6, sz as f64/total);
        }
    }}
}
