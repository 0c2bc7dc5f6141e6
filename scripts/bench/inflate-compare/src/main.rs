//! Inflate every chunk file given (zlib streams, as HDF5's deflate filter stores them) with
//! libdeflate, zlib and zlib-rs on one core, alternating, and print the time of each per
//! pass: `inflate-compare RAW_BYTES REPEATS chunk0.z chunk1.z ...`.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let raw: usize = args[1].parse().unwrap();
    let repeats: usize = args[2].parse().unwrap();
    let chunks: Vec<Vec<u8>> = args[3..].iter().map(|p| std::fs::read(p).unwrap()).collect();
    let stored: usize = chunks.iter().map(Vec::len).sum();
    let mut out = vec![0u8; raw];
    let mut expect: Option<Vec<u8>> = None;
    let mut times: [Vec<f64>; 3] = Default::default();
    let mut d = libdeflater::Decompressor::new();
    for _ in 0..repeats {
        for (k, t) in times.iter_mut().enumerate() {
            let start = Instant::now();
            let mut sum = 0u64;
            for c in &chunks {
                let n = match k {
                    0 => d.zlib_decompress(c, &mut out).unwrap(),
                    1 => {
                        let mut len = out.len() as libz_sys::uLongf;
                        // SAFETY: buffers valid for the lengths given.
                        let rc = unsafe { libz_sys::uncompress(out.as_mut_ptr(), &mut len, c.as_ptr(), c.len() as libz_sys::uLong) };
                        assert_eq!(rc, libz_sys::Z_OK);
                        len as usize
                    }
                    _ => {
                        let (o, rc) = zlib_rs::inflate::uncompress_slice(&mut out, c, zlib_rs::inflate::InflateConfig::default());
                        assert_eq!(rc, zlib_rs::ReturnCode::Ok);
                        o.len()
                    }
                };
                sum += out[..n].iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>();
                if k == 0 && expect.is_none() {
                    expect = Some(out[..n].to_vec());
                }
            }
            std::hint::black_box(sum);
            t.push(start.elapsed().as_secs_f64());
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    println!("{} chunks, {stored} bytes stored, {} bytes raw each; {repeats} alternating passes, one core", chunks.len(), raw);
    for (name, t) in ["libdeflate (libdeflater 1)", "zlib (system libz, uncompress)", "zlib-rs 0.5"].iter().zip(times.iter_mut()) {
        let (m, lo, hi) = med(t);
        println!("{name:32} median {:.3} ms per file (min {:.3}, max {:.3}), {:.2} GB/s out", m * 1e3, lo * 1e3, hi * 1e3, (raw * chunks.len()) as f64 / m / 1e9);
    }
}
