//! The kernel's source text, as run-time compilers get it. `kernels/climatology.hip` includes
//! its parts (`kernels/*.h`, `sort_network.inc`) by name, which hipcc resolves from the folder;
//! NVRTC is given one text instead, every header pasted in where it is first included. One text
//! keeps the compiler's inputs in one value: the kernel cache's key (kcache.rs) covers every
//! header through it, and no include path has to exist on the machine that runs the job.
//! Its tests also hold the Rust side to the kernel text: the header table, and
//! `KernelParams` against the kernel's `ClimParams` (kernels/params.h), field by field.

/// The climatology kernel's entry points, shared by HIP and CUDA.
pub const KERNEL_SOURCE: &str = include_str!("../../../kernels/climatology.hip");
/// The event detection's kernel (marine heatwaves and cold spells of a band's cells).
pub const EVENTS_SOURCE: &str = include_str!("../../../kernels/events.hip");
/// Everything vendor-specific, included by every kernel source.
pub const PORT_HEADER: &str = include_str!("../../../kernels/sstclim_port.h");
/// The generated sort networks (scripts/gen-sort-network.py).
pub const SORT_NETWORK: &str = include_str!("../../../kernels/sort_network.inc");

/// Every header a kernel source may include, by the name it is included as.
pub const KERNEL_HEADERS: [(&str, &str); 6] = [
    ("sstclim_port.h", PORT_HEADER),
    ("params.h", include_str!("../../../kernels/params.h")),
    ("keys.h", include_str!("../../../kernels/keys.h")),
    ("sort_network.inc", SORT_NETWORK),
    ("ring.h", include_str!("../../../kernels/ring.h")),
    ("walk.h", include_str!("../../../kernels/walk.h")),
];

/// The climatology kernel as one text, its headers pasted in (for NVRTC).
pub fn kernel_source_inlined() -> String {
    inline_includes("climatology.hip", KERNEL_SOURCE, &KERNEL_HEADERS)
}

/// The event detection's kernel as one text, its headers pasted in (for NVRTC).
pub fn events_source_inlined() -> String {
    inline_includes("events.hip", EVENTS_SOURCE, &KERNEL_HEADERS)
}

/// `text` (of file `file`) with each `#include "NAME"` line of a header in `headers` replaced
/// by that header's text, recursively, the first time NAME is included, and by an empty line
/// after that (the headers are `#pragma once`, whose lines become empty too). `#line`
/// directives keep the compiler's messages and line tables pointing at the files. Includes
/// are taken as they come, not evaluated against `#if`: the kernels' are unconditional.
/// Other includes are left as they are.
pub fn inline_includes(file: &str, text: &str, headers: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len() + headers.iter().map(|h| h.1.len()).sum::<usize>());
    let mut done = Vec::new();
    inline_into(&mut out, file, text, headers, &mut done);
    out
}

fn inline_into<'a>(out: &mut String, file: &str, text: &str, headers: &[(&'a str, &'a str)], done: &mut Vec<&'a str>) {
    for (i, line) in text.lines().enumerate() {
        if let Some(&(name, header)) = quoted_include(line).and_then(|n| headers.iter().find(|h| h.0 == n)) {
            if !done.contains(&name) {
                done.push(name);
                out.push_str(&format!("#line 1 \"{name}\"\n"));
                inline_into(out, name, header, headers, done);
                // the line after the include, numbered from 1
                out.push_str(&format!("#line {} \"{file}\"\n", i + 2));
                continue;
            }
            out.push('\n');
            continue;
        }
        if line.trim() == "#pragma once" {
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
}

/// NAME of a line `#include "NAME"` (spaces allowed around `#`).
fn quoted_include(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?;
    let rest = rest.trim_start().strip_prefix('"')?;
    Some(&rest[..rest.find('"')?])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every header in kernels/ is in the table, and the text NVRTC gets includes nothing
    /// by name any more: a header missing from the table would fail only at run time, on a GPU.
    #[test]
    fn the_inlined_kernel_includes_no_file() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".h") || name.ends_with(".inc") {
                let text = std::fs::read_to_string(dir.join(&name)).unwrap();
                let listed = KERNEL_HEADERS.iter().find(|h| h.0 == name);
                assert_eq!(listed.map(|h| h.1), Some(text.as_str()), "kernels/{name} in KERNEL_HEADERS");
            }
        }
        let text = kernel_source_inlined();
        let left: Vec<&str> = text.lines().filter(|l| quoted_include(l).is_some()).collect();
        assert!(left.is_empty(), "includes left for NVRTC: {left:?}");
        // each header once, every line of every header present
        for (name, header) in KERNEL_HEADERS {
            assert_eq!(text.matches(&format!("#line 1 \"{name}\"\n")).count(), 1, "{name}");
            let body = header.lines().filter(|l| quoted_include(l).is_none() && l.trim() != "#pragma once");
            assert!(body.clone().all(|l| text.contains(l)), "{name}");
        }
    }

    /// `KernelParams` is laid out as the kernel's `ClimParams`: same size and alignment, and every
    /// field at the same offset with the same size. The C++ side comes from a host compiler
    /// (`${CXX:-g++}`, as for the host checks) given kernels/params.h
    /// (tests/kernels/params_layout.cpp); both sides check that their fields cover the struct.
    #[test]
    fn kernel_params_are_laid_out_as_params_h() {
        use super::super::KernelParams;
        use std::mem::{align_of, offset_of, size_of};
        fn size<T>(_: fn(&KernelParams) -> &T) -> usize {
            size_of::<T>()
        }
        // (name in params.h, offset, size)
        macro_rules! fields {
            ($($field:ident $(as $c:literal)?),* $(,)?) => {
                vec![$((fields!(@name $field $($c)?), offset_of!(KernelParams, $field), size(|p| &p.$field))),*]
            };
            (@name $field:ident) => { stringify!($field) };
            (@name $field:ident $c:literal) => { $c };
        }
        let rust: Vec<(&str, usize, usize)> = fields![
            pool, out_values, out_counts, load_start, loads, target_lists, target_nl, group_off, group_rows,
            group_first, pos_lo, pos_frac, ring_global, lut, pool_stride, out_cell_stride, n_cells, out_cell0,
            n_batch, out_target0, out_targets, n_pct, max_n, min_samples, rows, ring, use_hints, pad as "pad_",
        ];
        let mut covered = vec![0; size_of::<KernelParams>()];
        for &(name, offset, size) in &rust {
            covered[offset..offset + size].iter_mut().for_each(|c| *c += 1);
            assert!(size > 0, "{name}");
        }
        assert!(covered.iter().all(|&c| c == 1), "KernelParams: fields listed here leave bytes uncovered");

        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("params_layout");
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
        let built = std::process::Command::new(&cxx)
            .current_dir(root)
            .args(["-std=c++17", "-Ikernels", "-Itests/kernels", "-o"])
            .arg(&exe)
            .arg("tests/kernels/params_layout.cpp")
            .output()
            .unwrap_or_else(|e| panic!("{cxx} (a C++ compiler, as for tests/kernels/*-host-check.sh): {e}"));
        assert!(built.status.success(), "{cxx} failed:\n{}", String::from_utf8_lossy(&built.stderr));
        let run = std::process::Command::new(&exe).output().unwrap();
        assert!(run.status.success(), "params_layout: {}", String::from_utf8_lossy(&run.stderr));
        let text = String::from_utf8(run.stdout).unwrap();
        let mut lines = text.lines();
        let mut header = |key: &str| -> usize {
            let line = lines.next().unwrap();
            line.strip_prefix(key).and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("{line}"))
        };
        assert_eq!(header("size"), size_of::<KernelParams>(), "sizeof(ClimParams)");
        assert_eq!(header("align"), align_of::<KernelParams>(), "alignof(ClimParams)");
        let kernel: Vec<(&str, usize, usize)> = lines
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f[0], f[1].parse().unwrap(), f[2].parse().unwrap())
            })
            .collect();
        let (mut kernel, mut rust) = (kernel, rust);
        kernel.sort_by_key(|f| f.1);
        rust.sort_by_key(|f| f.1);
        for (k, r) in kernel.iter().zip(&rust) {
            assert_eq!(k, r, "ClimParams (name, offset, size) against KernelParams");
        }
        assert_eq!(kernel.len(), rust.len(), "fields in ClimParams and KernelParams");
    }

    #[test]
    fn includes_are_pasted_once_with_their_lines() {
        let headers = [("a.h", "#pragma once\n#include \"b.h\"\nint a;\n"), ("b.h", "#pragma once\nint b;\n")];
        let text = inline_includes("m.cu", "#include \"a.h\"\n# include \"b.h\"\n#include <x.h>\nint m;\n", &headers);
        assert_eq!(
            text,
            "#line 1 \"a.h\"\n\n#line 1 \"b.h\"\n\nint b;\n#line 3 \"a.h\"\nint a;\n#line 2 \"m.cu\"\n\n#include <x.h>\nint m;\n"
        );
    }
}
