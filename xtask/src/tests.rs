//! The checks on planted trees: each rule fails on a tree that breaks it, naming what broke it,
//! and passes on a clean one.

use std::fs;
use std::path::Path;

use crate::{fnlen, layers};

/// A tree of files under a temporary directory: (relative path, text).
fn plant(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    for (path, text) in files {
        let full = dir.path().join(path);
        fs::create_dir_all(full.parent().expect("has a parent")).expect("create directories");
        fs::write(full, text).expect("write a planted file");
    }
    dir
}

const LIB: &str = "pub mod cli;\npub mod output;\npub mod util;\npub mod plan;\n";
const CLEAN: &[(&str, &str)] = &[
    ("lib.rs", LIB),
    ("cli/mod.rs", "use crate::plan::Plan;\npub fn parse() -> Plan { crate::plan::make() }\n"),
    ("plan.rs", "pub struct Plan;\npub fn make() -> Plan { crate::util::touch(); Plan }\n"),
    ("util/mod.rs", "pub fn touch() {}\n"),
    ("output/mod.rs", "mod a;\nmod b;\nmod c;\npub use self::c::Shared;\n#[cfg(test)]\nmod tests;\n"),
    ("output/a.rs", "use super::{b::{self, B}, Shared};\npub fn a(_: B, _: Shared) { b::b() }\n"),
    ("output/b.rs", "pub struct B;\npub fn b() {}\n"),
    ("output/c.rs", "pub struct Shared;\n"),
    // tests may use any sibling: no circle
    ("output/tests.rs", "use super::a::a;\nuse super::b::B;\n"),
];

fn check(files: &[(&str, &str)]) -> Vec<String> {
    let dir = plant(files);
    layers::check(dir.path()).expect("the planted tree parses")
}

fn with(changes: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut files: Vec<_> = CLEAN.iter().copied().filter(|(p, _)| !changes.iter().any(|(q, _)| q == p)).collect();
    files.extend_from_slice(changes);
    files
}

#[test]
fn a_clean_tree_passes() {
    assert_eq!(check(CLEAN), Vec::<String>::new());
}

#[test]
fn an_upward_import_in_an_inline_path_fails_naming_both_modules() {
    let problems = check(&with(&[("util/mod.rs", "pub fn touch() {\n    let _ = crate::cli::parse();\n}\n")]));
    // the upward import, and the circle it closes through cli -> plan -> util
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].ends_with("util/mod.rs:2: util (layer 5) imports cli (layer 0, above)"), "{problems:?}");
    assert!(
        problems[1].starts_with("import circle between top-level modules: cli -> plan -> util -> cli"),
        "{problems:?}"
    );
}

#[test]
fn an_upward_import_inside_a_macro_call_fails() {
    let problems = check(&with(&[(
        "util/mod.rs",
        "pub fn touch() {\n    println!(\"{:?}\", \"x\\\n y\", crate::plan::make());\n}\n",
    )]));
    assert!(problems.iter().any(|p| p.contains("util (layer 5) imports plan (layer 3, above)")), "{problems:?}");
}

#[test]
fn a_circle_through_a_nested_super_group_fails_naming_its_files() {
    // b reaches a through `use super::{x, a::{...}}`, a reaches b: the regex script missed this
    let problems = check(&with(&[("output/b.rs", "use super::{c, a::{a as f}};\npub struct B;\npub fn b() {}\n")]));
    assert_eq!(problems.len(), 1, "{problems:?}");
    let p = &problems[0];
    assert!(p.starts_with("import circle inside output: a -> b -> a"), "{p}");
    assert!(p.contains("output/a.rs:1 uses output::b"), "{p}");
    assert!(p.contains("output/b.rs:1 uses output::a::a"), "{p}");
}

#[test]
fn a_circle_through_a_re_export_of_the_parent_fails() {
    // c names a's function only through `super::entry`, which the parent re-exports from a;
    // a uses c's `Shared` through the parent's `pub use` too
    let problems = check(&with(&[
        ("output/mod.rs", "mod a;\nmod b;\nmod c;\npub use self::c::Shared;\npub(crate) use a::a as entry;\n"),
        ("output/c.rs", "pub struct Shared;\nfn f() {\n    super::entry(todo!(), Shared)\n}\n"),
    ]));
    assert_eq!(problems.len(), 1, "{problems:?}");
    let p = &problems[0];
    assert!(p.starts_with("import circle inside output: a -> c -> a"), "{p}");
    assert!(p.contains("output/c.rs:3 uses output::entry"), "{p}");
}

#[test]
fn a_circle_between_top_level_modules_of_one_layer_fails() {
    let problems = check(&with(&[
        ("lib.rs", "pub mod cli;\npub mod output;\npub mod util;\npub mod plan;\npub mod events;\n"),
        ("events.rs", "pub fn e() { crate::output::a::a(todo!(), todo!()) }\n"),
        (
            "output/a.rs",
            "use super::{b::{self, B}, Shared};\npub fn a(_: B, _: Shared) { b::b(); crate::events::e() }\n",
        ),
    ]));
    assert!(
        problems.iter().any(|p| p.starts_with("import circle between top-level modules: events -> output -> events")),
        "{problems:?}"
    );
}

#[test]
fn a_module_without_a_layer_fails() {
    let problems = check(&with(&[
        ("lib.rs", "pub mod cli;\npub mod output;\npub mod util;\npub mod plan;\npub mod extra;\n"),
        ("extra.rs", "use crate::util::touch;\n"),
    ]));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].ends_with("extra.rs: module extra has no layer in xtask/src/layers.rs"), "{problems:?}");
}

#[test]
fn test_code_may_use_its_siblings_both_ways() {
    let problems = check(&with(&[("output/b.rs", "pub struct B;\npub fn b() {}\n#[cfg(test)]\nmod t {\n    use super::super::a;\n}\n#[cfg(test)]\nuse super::a::a;\n")]));
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn the_function_cap_names_each_long_function_and_skips_generated_files() {
    let long_body = "    let _x = 1;\n".repeat(99);
    let ok_body = "    let _x = 1;\n".repeat(98);
    let long = format!("fn short() {{}}\nstruct S;\nimpl S {{\n    fn long(&self) {{\n{long_body}    }}\n}}\nfn fits() {{\n{ok_body}}}\n");
    let dir = plant(&[("lib.rs", &long), ("engine/sort_net.rs", &format!("fn gen() {{\n{long_body}}}\n"))]);
    let found = fnlen::check(dir.path(), fnlen::MAX_LINES).expect("parses");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].line, found[0].name.as_str(), found[0].lines), (4, "S::long", 101));
    assert_eq!(found[0].file, Path::new(dir.path()).join("lib.rs"));
}
