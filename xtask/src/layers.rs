//! The layer rule and the circle rule over the crate's imports.
//!
//! Layers, top to bottom (the README's "How it works" describes them):
//!   0 cli        clap types and their validation into a plan
//!   1 job        the jobs: run (one rank), dist (across ranks), run_events, and job/ (where
//!                they are heading), with the subcommands beside them (tools, bench)
//!   2 pipeline   the tile loop that drives the stages for a job
//!   3 plan       what a job is (plan) and what can go wrong in it (error): the types the
//!                jobs, the pipeline and the stages' callers share
//!   4 stages     discover, window, calendar, percentile, template, input, pool, engine, output,
//!                smooth, events; and the modules issue 41 plans beside them: stats (percentile,
//!                StatSpec, TileResult), nc (the NetCDF writing kit), source (where a job's values
//!                come from: files or memory), sink (where results go), doy (calendar rules)
//!   5 utilities  util, report
//! A module may use its own layer and the layers below it. Within a layer any import is
//! allowed as long as it closes no circle. `lib.rs` (the crate root, the public API) may
//! re-export from any layer; `main.rs` (above cli) uses the library through `sstclim::`.
//!
//! Circles: no two modules under one parent (top-level modules, or files of one directory, or
//! inline modules of one file) may import each other, directly or round a longer circle.
//! `#[cfg(test)]` code is exempt (a test may use its siblings). An import counts towards the
//! module its path names and towards the module that defines the item, through re-exports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::tree::{ModPath, Tree};

/// The layer of each top-level module (smaller is higher).
pub const LAYERS: &[(&str, u8)] = &[
    ("cli", 0),
    ("run", 1),
    ("run_events", 1),
    ("dist", 1),
    ("job", 1),
    ("api", 1),
    ("tools", 1),
    ("bench", 1),
    ("pipeline", 2),
    ("plan", 3),
    ("error", 3),
    ("discover", 4),
    ("window", 4),
    ("calendar", 4),
    ("template", 4),
    ("input", 4),
    ("pool", 4),
    ("engine", 4),
    ("output", 4),
    ("smooth", 4),
    ("events", 4),
    ("stats", 4),
    ("nc", 4),
    ("source", 4),
    ("sink", 4),
    ("doy", 4),
    ("util", 5),
    ("report", 5),
];

fn layer(name: &str) -> Option<u8> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|&(_, l)| l)
}

/// One import that makes an edge: where it is written.
#[derive(Debug, Clone)]
struct Site {
    file: String,
    line: usize,
    what: String,
}

/// The problems in the crate under `src`, one line each, sorted.
pub fn check(src: &Path) -> Result<Vec<String>, String> {
    let tree = Tree::load(src)?;
    let mut problems = BTreeSet::new();
    // (parent, child) -> sibling child -> the first import making the edge
    let mut edges: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, Site>>> = BTreeMap::new();
    for (from, module) in &tree.modules {
        if from.is_empty() {
            continue; // the crate root: the public API re-exports from every layer
        }
        for r in &module.refs {
            let textual = tree.module_prefix(&r.path);
            let defining = tree.resolve(&r.path);
            let mut targets = vec![textual];
            if !targets.contains(&defining) {
                targets.push(defining);
            }
            for to in targets {
                if to.is_empty() {
                    continue;
                }
                let site = Site { file: module.file.display().to_string(), line: r.line, what: r.path.join("::") };
                if from[0] != to[0] {
                    match (layer(&from[0]), layer(&to[0])) {
                        (Some(a), Some(b)) if b < a => {
                            problems.insert(format!(
                                "{}:{}: {} (layer {a}) imports {} (layer {b}, above)",
                                site.file,
                                site.line,
                                from.join("::"),
                                to.join("::")
                            ));
                        }
                        (None, _) => {
                            problems.insert(format!(
                                "{}: module {} has no layer in xtask/src/layers.rs",
                                site.file, from[0]
                            ));
                        }
                        (_, None) => {
                            problems
                                .insert(format!("{}: module {} has no layer in xtask/src/layers.rs", site.file, to[0]));
                        }
                        _ => {}
                    }
                }
                if r.test || module.test {
                    continue;
                }
                let k = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if k < from.len() && k < to.len() {
                    edges
                        .entry(from[..k].to_vec())
                        .or_default()
                        .entry(from[k].clone())
                        .or_default()
                        .entry(to[k].clone())
                        .or_insert(site);
                }
            }
        }
    }
    for (parent, graph) in &edges {
        for (circle, tangle) in circles(graph) {
            let place = if parent.is_empty() {
                "between top-level modules".to_string()
            } else {
                format!("inside {}", parent.join("::"))
            };
            let mut evidence = Vec::new();
            for pair in circle.windows(2) {
                let site = &graph[&pair[0]][&pair[1]];
                evidence.push(format!("{}:{} uses {}", site.file, site.line, site.what));
            }
            // a tangle wider than the circle shown: name every module in it
            let wider = if tangle.len() + 1 > circle.len() {
                format!("; the whole tangle: {}", tangle.join(", "))
            } else {
                String::new()
            };
            problems.insert(format!("import circle {place}: {} ({}{wider})", circle.join(" -> "), evidence.join("; ")));
        }
    }
    Ok(problems.into_iter().collect())
}

type Graph = BTreeMap<String, BTreeMap<String, Site>>;

/// One circle (first node repeated at the end) per strongly connected component of more than
/// one node (Tarjan's algorithm), with the component's members.
fn circles(graph: &Graph) -> Vec<(Vec<String>, Vec<String>)> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        out: Vec<(Vec<String>, Vec<String>)>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in s.graph.get(v).into_iter().flat_map(|m| m.keys()) {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let lw = s.low[w.as_str()];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push((path_in(&comp, s.graph), comp.iter().map(|c| c.to_string()).collect()));
            }
        }
    }
    let mut s = State { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), out: Vec::new() };
    let nodes: BTreeSet<&str> =
        graph.iter().flat_map(|(a, m)| std::iter::once(a.as_str()).chain(m.keys().map(String::as_str))).collect();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The shortest circle through the component's first node (breadth first).
fn path_in(comp: &[&str], graph: &Graph) -> Vec<String> {
    let start = comp[0];
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in graph.get(v).into_iter().flat_map(|m| m.keys()) {
            if w == start {
                let mut walk = vec![v];
                while let Some(p) = prev.get(walk.last().expect("non-empty")) {
                    walk.push(p);
                }
                walk.reverse();
                walk.push(start);
                return walk.into_iter().map(str::to_string).collect();
            }
            if comp.contains(&w.as_str()) && w != start && !prev.contains_key(w.as_str()) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    comp.iter().map(|s| s.to_string()).collect()
}
