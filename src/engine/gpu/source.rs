//! The kernel's source text, as run-time compilers get it. `kernels/climatology.hip` includes
//! its parts (`kernels/*.h`, `sort_network.inc`) by name, which hipcc resolves from the folder;
//! NVRTC is given one text instead, every header pasted in where it is first included. One text
//! keeps the compiler's inputs in one value: the kernel cache's key (kcache.rs) covers every
//! header through it, and no include path has to exist on the machine that runs the job.

/// The climatology kernel's entry points, shared by HIP and CUDA.
pub const KERNEL_SOURCE: &str = include_str!("../../../kernels/climatology.hip");
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
