//! The function-length cap: a function a person can hold in their head. Every `fn` with a body
//! (free functions, methods, trait defaults, nested functions) in every `.rs` file under the
//! tree is measured from its `fn` line to its closing brace; generated files are exempt.

use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The longest function allowed, in lines.
pub const MAX_LINES: usize = 100;

/// Files written by a generator, not by hand (relative to the source root).
pub const GENERATED: &[&str] = &["engine/sort_net.rs"];

/// A function over the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Long {
    pub file: PathBuf,
    pub line: usize,
    pub name: String,
    pub lines: usize,
}

/// The functions under `src` over `max` lines, in file order.
pub fn check(src: &Path, max: usize) -> Result<Vec<Long>, String> {
    let mut files = Vec::new();
    walk(src, &mut files).map_err(|e| format!("{}: {e}", src.display()))?;
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        if GENERATED.contains(&rel.as_str()) {
            continue;
        }
        let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let ast = syn::parse_file(&text).map_err(|e| format!("{}:{}: {e}", file.display(), e.span().start().line))?;
        let mut v = Measure { file: &file, owner: Vec::new(), max, out: &mut out };
        v.visit_file(&ast);
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

struct Measure<'a> {
    file: &'a Path,
    /// The enclosing impl's type or trait, for method names.
    owner: Vec<String>,
    max: usize,
    out: &'a mut Vec<Long>,
}

impl Measure<'_> {
    fn measure(&mut self, ident: &syn::Ident, sig_start: proc_macro2::Span, block: &syn::Block) {
        let first = sig_start.start().line;
        let last = block.brace_token.span.close().end().line;
        let lines = last + 1 - first;
        if lines > self.max {
            let name = match self.owner.last() {
                Some(o) => format!("{o}::{ident}"),
                None => ident.to_string(),
            };
            self.out.push(Long { file: self.file.to_path_buf(), line: first, name, lines });
        }
    }
}

impl<'ast> Visit<'ast> for Measure<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.measure(&f.sig.ident, f.sig.fn_token.span, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.measure(&f.sig.ident, f.sig.fn_token.span, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.measure(&f.sig.ident, f.sig.fn_token.span, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let ty = &*i.self_ty;
        let name = match ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
            _ => "impl".to_string(),
        };
        self.owner.push(name);
        syn::visit::visit_item_impl(self, i);
        self.owner.pop();
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.owner.push(t.ident.to_string());
        syn::visit::visit_item_trait(self, t);
        self.owner.pop();
    }
}
