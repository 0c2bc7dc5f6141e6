// Per-core coding rate of a compressed output's chunks, before (main at eff1671) against after
// (this branch), alternating in one process, timed in thread CPU time (the dev VM is shared):
// bench-results/runs/2026-12-02-vm-deflate-s37. Each chunk is one raw little-endian float32 day
// field (NaN where the fill value is), encoded from float64 as the write stage does, shuffled,
// and coded at level 1; every stream is inflated back and checked.
// Usage: planes-bench FIELDS.f32 NLAT NLON [ROUNDS]
#[allow(dead_code)]
mod output {
    #[path = "/work/wt/h31/src/output/encode.rs"]
    pub mod encode;
    #[path = "/work/wt/h31/src/output/rle_deflate.rs"]
    pub mod rle_deflate;
}
#[allow(dead_code)]
mod before {
    #[path = "/tmp/h31/old/encode.rs"]
    pub mod encode;
    #[path = "/tmp/h31/old/rle_deflate.rs"]
    pub mod rle_deflate;
}

fn cpu() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let raw = std::fs::read(&a[1]).unwrap();
    let (nlat, nlon): (usize, usize) = (a[2].parse().unwrap(), a[3].parse().unwrap());
    let rounds: usize = a.get(4).map_or(3, |s| s.parse().unwrap());
    let fill = 9.969_209_968_386_869e36f64;
    let vals: Vec<f64> = raw
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .map(|x| if x == fill as f32 { f64::NAN } else { f64::from(x) })
        .collect();
    let n = nlat * nlon;
    let fields: Vec<&[f64]> = vals.chunks_exact(n).collect();
    let mb = (fields.len() * n * 4) as f64 / 1e6;
    let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(1).unwrap());
    let mut d = libdeflater::Decompressor::new();
    let (mut encoded, mut shuffled, mut back) = (vec![0u8; n * 4], vec![0u8; n * 4], vec![0u8; n * 4]);
    println!("{} chunks of {} values, {mb:.1} MB of float32", fields.len(), n);
    for r in 0..rounds {
        // before: encode, shuffle, code
        let e0 = before::encode::Encoding { ty: before::encode::OutputType::F32, scale: 1.0, offset: 0.0, shift: 0.0, fill };
        let (mut tp, mut tc, mut z) = (0f64, 0f64, 0usize);
        for f in &fields {
            let t = cpu();
            e0.encode_into(f, &mut encoded).unwrap();
            before::encode::shuffle(&encoded, 4, &mut shuffled);
            let t1 = cpu();
            let mut out = Vec::new();
            before::encode::zlib_planes(&mut c, &shuffled, 4, true, 1, &mut out);
            tc += cpu() - t1;
            tp += t1 - t;
            z += out.len();
            assert_eq!(d.zlib_decompress(&out, &mut back).unwrap(), n * 4);
            assert_eq!(back, shuffled);
        }
        println!("round {r} before: encode+shuffle {:.0} MB/s, code {:.0} MB/s, all {:.0} MB/s, {:.4} of f32 bytes", mb / tp, mb / tc, mb / (tp + tc), z as f64 / (mb * 1e6));
        // after: encode into the shuffled planes, code
        let e1 = output::encode::Encoding { ty: output::encode::OutputType::F32, scale: 1.0, offset: 0.0, shift: 0.0, fill };
        let (mut tp, mut tc, mut z) = (0f64, 0f64, 0usize);
        for f in &fields {
            let t = cpu();
            e1.encode_shuffled(f, &mut encoded).unwrap();
            let t1 = cpu();
            let mut out = Vec::new();
            output::encode::zlib_planes(&mut c, &encoded, 4, true, 1, &mut out);
            tc += cpu() - t1;
            tp += t1 - t;
            z += out.len();
            assert_eq!(d.zlib_decompress(&out, &mut back).unwrap(), n * 4);
            e0.encode_into(f, &mut shuffled).unwrap();
            let mut sh = Vec::new();
            before::encode::shuffle(&shuffled, 4, &mut sh);
            assert_eq!(back, sh);
        }
        println!("round {r} after:  encode+shuffle {:.0} MB/s, code {:.0} MB/s, all {:.0} MB/s, {:.4} of f32 bytes", mb / tp, mb / tc, mb / (tp + tc), z as f64 / (mb * 1e6));
    }
}
