//! The crate's module tree as rustc sees it: from `lib.rs` along the `mod` declarations (files
//! and inline blocks, `#[path]` included), with what each module defines, what its `use`
//! declarations bring into scope, and every path it names into the crate (`use`, paths in
//! expressions and types, paths inside macro calls). The layer check resolves those paths.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// A module's absolute path below the crate root (`[]` is the root).
pub type ModPath = Vec<String>;

/// A path one module names, made absolute (from the crate root) but not yet resolved through
/// `use` aliases.
#[derive(Debug, Clone)]
pub struct Ref {
    pub path: Vec<String>,
    pub line: usize,
    /// Inside `#[cfg(test)]` code: exempt from the circle rule.
    pub test: bool,
}

#[derive(Debug, Default)]
pub struct Module {
    pub file: PathBuf,
    /// Declared under `#[cfg(test)]` (itself or an ancestor).
    pub test: bool,
    /// Names of the items defined here (functions, types, traits, constants, macros).
    pub items: HashSet<String>,
    /// `use` names: the local name and the absolute path it stands for.
    pub aliases: HashMap<String, Vec<String>>,
    /// `use a::b::*`: the absolute paths of the glob sources.
    pub globs: Vec<Vec<String>>,
    pub refs: Vec<Ref>,
}

#[derive(Debug, Default)]
pub struct Tree {
    pub modules: BTreeMap<ModPath, Module>,
}

impl Tree {
    /// Reads the crate whose root is `src/lib.rs`.
    pub fn load(src: &Path) -> Result<Tree, String> {
        let mut tree = Tree::default();
        tree.load_file(&src.join("lib.rs"), Vec::new(), src.to_path_buf(), false)?;
        Ok(tree)
    }

    fn load_file(&mut self, file: &Path, path: ModPath, dir: PathBuf, test: bool) -> Result<(), String> {
        let text = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let ast = syn::parse_file(&text).map_err(|e| {
            let at = e.span().start();
            format!("{}:{}:{}: {e}", file.display(), at.line, at.column + 1)
        })?;
        self.load_items(file, &ast.items, path, dir, test)
    }

    /// One module's items; `dir` is where its out-of-line child modules live.
    fn load_items(
        &mut self,
        file: &Path,
        items: &[syn::Item],
        path: ModPath,
        dir: PathBuf,
        test: bool,
    ) -> Result<(), String> {
        let mut module = Module { file: file.to_path_buf(), test, ..Module::default() };
        let mut children = Vec::new();
        for item in items {
            if let syn::Item::Mod(m) = item {
                module.items.insert(m.ident.to_string());
                children.push(m);
            } else if let Some(name) = item_name(item) {
                module.items.insert(name);
            }
        }
        for item in items {
            if let syn::Item::Mod(_) = item {
                continue;
            }
            let mut collect = Collect { module: &path, refs: Vec::new(), test: test || is_cfg_test(item_attrs(item)) };
            collect.visit_item(item);
            module.refs.extend(collect.refs);
            if let syn::Item::Use(u) = item {
                if !is_cfg_test(&u.attrs) {
                    let mut out = Vec::new();
                    flatten_use(&u.tree, Vec::new(), &mut out);
                    for (raw, name) in out {
                        let Some(abs) = absolute(&path, &raw, &module.items) else {
                            continue;
                        };
                        match name {
                            UseName::Glob => module.globs.push(abs),
                            UseName::Name(n) => {
                                module.aliases.insert(n, abs);
                            }
                        }
                    }
                }
            }
        }
        let child_test = test;
        self.modules.insert(path.clone(), module);
        for m in children {
            let mut child = path.clone();
            child.push(m.ident.to_string());
            let test = child_test || is_cfg_test(&m.attrs);
            let child_dir = dir.join(m.ident.to_string());
            match &m.content {
                Some((_, items)) => self.load_items(file, items, child, child_dir, test)?,
                None => {
                    let (child_file, grand_dir) = match path_attr(&m.attrs) {
                        Some(p) => {
                            let f = dir.join(p);
                            let d = f.parent().map(Path::to_path_buf).unwrap_or_default();
                            (f, d)
                        }
                        None => {
                            let flat = dir.join(format!("{}.rs", m.ident));
                            if flat.exists() {
                                (flat, child_dir)
                            } else {
                                (child_dir.join("mod.rs"), child_dir)
                            }
                        }
                    };
                    self.load_file(&child_file, child, grand_dir, test)?;
                }
            }
        }
        Ok(())
    }

    /// The longest prefix of `path` that names a module.
    pub fn module_prefix(&self, path: &[String]) -> ModPath {
        let mut k = path.len();
        while k > 0 && !self.modules.contains_key(&path[..k]) {
            k -= 1;
        }
        path[..k].to_vec()
    }

    /// The module that defines what `path` names, following `use` aliases (re-exports) and globs.
    pub fn resolve(&self, path: &[String]) -> ModPath {
        self.resolve_depth(path, 0)
    }

    fn resolve_depth(&self, path: &[String], depth: usize) -> ModPath {
        let mut cur: ModPath = Vec::new();
        for (i, seg) in path.iter().enumerate() {
            let mut next = cur.clone();
            next.push(seg.clone());
            if self.modules.contains_key(&next) {
                cur = next;
                continue;
            }
            let Some(module) = self.modules.get(&cur) else { return cur };
            if module.items.contains(seg) || depth > 16 {
                return cur;
            }
            if let Some(target) = module.aliases.get(seg) {
                let mut full = target.clone();
                full.extend_from_slice(&path[i + 1..]);
                return self.resolve_depth(&full, depth + 1);
            }
            for glob in &module.globs {
                let source = self.module_prefix(glob);
                if source == *glob {
                    if let Some(src) = self.modules.get(&source) {
                        let mut sub = source.clone();
                        sub.push(seg.clone());
                        if src.items.contains(seg) || src.aliases.contains_key(seg) || self.modules.contains_key(&sub) {
                            let mut full = source.clone();
                            full.extend_from_slice(&path[i..]);
                            return self.resolve_depth(&full, depth + 1);
                        }
                    }
                }
            }
            return cur;
        }
        cur
    }
}

enum UseName {
    Name(String),
    Glob,
}

/// `use a::{b, c::{d as e, self}, f::*}` as (path, local name) pairs.
fn flatten_use(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<(Vec<String>, UseName)>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(p.ident.to_string());
            flatten_use(&p.tree, next, out);
        }
        syn::UseTree::Name(n) => {
            if n.ident == "self" {
                let name = prefix.last().cloned().unwrap_or_default();
                out.push((prefix, UseName::Name(name)));
            } else {
                let mut full = prefix;
                full.push(n.ident.to_string());
                out.push((full, UseName::Name(n.ident.to_string())));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix;
            if r.ident != "self" {
                full.push(r.ident.to_string());
            }
            out.push((full, UseName::Name(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix, UseName::Glob)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix.clone(), out);
            }
        }
    }
}

/// `raw` as seen from module `at`, made absolute; `None` for a path outside the crate.
/// `crate::`, `super::` (repeated), `self::` and a leading name of a local item or child module
/// (edition 2018 paths; `items` holds the child modules too) are inside the crate.
fn absolute(at: &[String], raw: &[String], items: &HashSet<String>) -> Option<Vec<String>> {
    let first = raw.first()?;
    let mut base: Vec<String>;
    let mut rest = raw;
    if first == "crate" {
        base = Vec::new();
        rest = &raw[1..];
    } else if first == "self" {
        base = at.to_vec();
        rest = &raw[1..];
    } else if first == "super" {
        base = at.to_vec();
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
    } else if items.contains(first) {
        base = at.to_vec();
    } else {
        return None;
    }
    base.extend_from_slice(rest);
    Some(base)
}

/// Collects the crate paths named in one item of module `module` (not in nested modules: those
/// are modules of their own).
struct Collect<'a> {
    module: &'a [String],
    refs: Vec<Ref>,
    test: bool,
}

impl Collect<'_> {
    fn push(&mut self, raw: Vec<String>, line: usize) {
        let Some(first) = raw.first() else { return };
        if !matches!(first.as_str(), "crate" | "super" | "self") || raw.len() < 2 {
            return;
        }
        if let Some(path) = absolute(self.module, &raw, &HashSet::new()) {
            self.refs.push(Ref { path, line, test: self.test });
        }
    }

    /// `crate :: a :: b` (and `super`, `self`) sequences in a macro's tokens.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tts.len() {
            match &tts[i] {
                TokenTree::Group(g) => self.scan_tokens(g.stream()),
                TokenTree::Ident(id) if matches!(id.to_string().as_str(), "crate" | "super" | "self") => {
                    let line = id.span().start().line;
                    let mut raw = vec![id.to_string()];
                    let mut j = i + 1;
                    while j + 2 < tts.len() + 1 {
                        let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) = (tts.get(j), tts.get(j + 1))
                        else {
                            break;
                        };
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        let Some(TokenTree::Ident(next)) = tts.get(j + 2) else { break };
                        raw.push(next.to_string());
                        j += 3;
                    }
                    self.push(raw, line);
                    i = j.max(i + 1);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Collect<'_> {
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_item(&mut self, i: &'ast syn::Item) {
        let was = self.test;
        self.test |= is_cfg_test(item_attrs(i));
        syn::visit::visit_item(self, i);
        self.test = was;
    }

    fn visit_impl_item_fn(&mut self, i: &'ast syn::ImplItemFn) {
        let was = self.test;
        self.test |= is_cfg_test(&i.attrs);
        syn::visit::visit_impl_item_fn(self, i);
        self.test = was;
    }

    fn visit_use_tree(&mut self, tree: &'ast syn::UseTree) {
        let mut out = Vec::new();
        flatten_use(tree, Vec::new(), &mut out);
        let line = use_line(tree);
        for (raw, _) in out {
            self.push(raw, line);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let raw: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p.segments.first().map_or(0, |s| s.ident.span().start().line);
        if p.leading_colon.is_none() {
            self.push(raw, line);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.scan_tokens(m.tokens.clone());
    }
}

fn use_line(tree: &syn::UseTree) -> usize {
    match tree {
        syn::UseTree::Path(p) => p.ident.span().start().line,
        syn::UseTree::Name(n) => n.ident.span().start().line,
        syn::UseTree::Rename(r) => r.ident.span().start().line,
        syn::UseTree::Glob(g) => g.star_token.span.start().line,
        syn::UseTree::Group(g) => g.brace_token.span.open().start().line,
    }
}

fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::ExternCrate(i) => i.rename.as_ref().map_or(&i.ident, |r| &r.1),
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]` exactly: code compiled only into the unit tests (`cfg(any(test, ...))` is
/// product code in some build, so it is not exempt).
pub fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|id| id == "test"))
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}
