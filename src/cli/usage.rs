//! The flag reference `docs/usage.md`, generated from the clap definitions so that it cannot
//! drift from what `sstclim --help` says: every user subcommand's about, usage line and flags
//! (names, value names, defaults, possible values, the whole long help) as markdown. The
//! benchmark subcommands (feature `bench`) are left out, so the page is the same whatever
//! features the build has. The test below compares the page with the definitions and rewrites
//! it when `SSTCLIM_BLESS` is set. Only that test renders the page, so the module is built
//! with the tests alone.
#![cfg(test)]

use clap::{Arg, Command, CommandFactory};

use super::Cli;

/// How to bring `docs/usage.md` up to date, named in the test's failure.
const REGENERATE: &str = "SSTCLIM_BLESS=1 cargo test --release --locked --features bench,test-hooks --lib -- usage";

/// The whole page: the global flags, then one section per user subcommand in declaration order.
pub fn render() -> String {
    let mut cli = Cli::command();
    cli.build();
    let mut out = String::from("# Command-line reference\n\n");
    out.push_str(&format!(
        "Generated from the clap definitions (`src/cli/`) by `src/cli/usage.rs`; do not edit by \
         hand. After changing a flag, regenerate it with\n`{REGENERATE}`\n(the unit test \
         `cli::usage` fails while this page differs from the definitions).\n\n"
    ));
    out.push_str(&paragraphs(cli.get_long_about().or(cli.get_about()).map(|s| s.to_string())));
    out.push_str("## Global flags\n\nThese apply to every subcommand.\n\n");
    for arg in cli.get_arguments().filter(|a| !a.is_hide_set()) {
        out.push_str(&render_arg(arg));
    }
    out.push('\n');
    let names: Vec<String> =
        cli.get_subcommands().filter(|c| is_documented(c)).map(|c| c.get_name().to_string()).collect();
    for name in names {
        let sub = cli.find_subcommand_mut(&name).expect("a subcommand just listed");
        out.push_str(&render_subcommand(sub));
    }
    out
}

/// The user's subcommands: not the benchmarks (feature `bench`), not clap's `help`, not hidden.
fn is_documented(cmd: &Command) -> bool {
    let name = cmd.get_name();
    !name.starts_with("bench-") && name != "help" && !cmd.is_hide_set()
}

/// One subcommand: its about, usage line, and its own flags grouped under their help headings
/// in the order `--help` shows them (the global flags are listed once, above).
fn render_subcommand(cmd: &mut Command) -> String {
    let mut out = format!("## `sstclim {}`\n\n", cmd.get_name());
    out.push_str(&paragraphs(cmd.get_long_about().or(cmd.get_about()).map(|s| s.to_string())));
    let usage = cmd.render_usage().to_string();
    out.push_str(&format!("```\n{}\n```\n\n", usage.trim_end()));
    let own: Vec<&Arg> = cmd.get_arguments().filter(|a| !a.is_global_set() && !a.is_hide_set()).collect();
    let mut headings: Vec<Option<&str>> = Vec::new();
    for arg in &own {
        if !headings.contains(&arg.get_help_heading()) {
            headings.push(arg.get_help_heading());
        }
    }
    for heading in headings {
        let title = heading.unwrap_or(if own.iter().all(|a| a.is_positional()) { "Arguments" } else { "Options" });
        out.push_str(&format!("### {title}\n\n"));
        for arg in own.iter().filter(|a| a.get_help_heading() == heading) {
            out.push_str(&render_arg(arg));
        }
        out.push('\n');
    }
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        out.push_str(&paragraphs(Some(after.to_string())));
    }
    out
}

/// One flag as a list item: its names and value, whether it is required, its whole help, its
/// default and its possible values.
fn render_arg(arg: &Arg) -> String {
    let mut item = format!("- `{}`", signature(arg));
    if arg.is_required_set() {
        item.push_str(" (required)");
    }
    let help = arg.get_long_help().or(arg.get_help()).map(|s| s.to_string()).unwrap_or_default();
    let mut lines: Vec<String> = help.trim().lines().map(|l| l.trim_end().to_string()).collect();
    if let Some(first) = lines.first_mut() {
        item.push_str(": ");
        item.push_str(first);
        *first = String::new();
    }
    let mut facts = Vec::new();
    if arg.get_action().takes_values() {
        let defaults: Vec<String> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
        if !defaults.is_empty() {
            facts.push(format!("Default: `{}`.", defaults.join(",")));
        }
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        if !values.is_empty() {
            facts.push(format!("Values: {}.", values.join(", ")));
        }
    }
    if let Some(aliases) = arg.get_visible_aliases() {
        let names: Vec<String> = aliases.iter().map(|a| format!("`--{a}`")).collect();
        facts.push(format!("Also: {}.", names.join(", ")));
    }
    if !facts.is_empty() {
        lines.push(String::new());
        lines.push(facts.join(" "));
    }
    item.push('\n');
    for line in lines.iter().skip(1) {
        if line.is_empty() {
            item.push('\n');
        } else {
            item.push_str(&format!("  {line}\n"));
        }
    }
    // A list item's trailing blank lines would end the list early.
    while item.ends_with("\n\n") {
        item.pop();
    }
    item
}

/// A flag's names and value as the user types them: `-i, --input <INPUT>...`.
fn signature(arg: &Arg) -> String {
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    let mut text = names.join(", ");
    if arg.get_action().takes_values() {
        let value: Vec<String> = match arg.get_value_names() {
            Some(v) => v.iter().map(|n| format!("<{n}>")).collect(),
            None => vec![format!("<{}>", arg.get_id().as_str().to_uppercase())],
        };
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&value.join(" "));
        if arg.get_num_args().is_some_and(|r| r.max_values() > 1) {
            text.push_str("...");
        }
    }
    text
}

/// Help text as markdown paragraphs, followed by a blank line (nothing where there is none).
fn paragraphs(text: Option<String>) -> String {
    match text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) {
        Some(t) => format!("{t}\n\n"),
        None => String::new(),
    }
}

mod tests {
    use super::*;

    /// docs/usage.md is what the clap definitions render now.
    #[test]
    fn usage_md_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/usage.md");
        let rendered = render();
        if crate::util::knobs::bless_docs() {
            std::fs::write(&path, &rendered).unwrap();
            return;
        }
        let stored = std::fs::read_to_string(&path).unwrap_or_default();
        if stored != rendered {
            let line = stored
                .lines()
                .zip(rendered.lines())
                .position(|(a, b)| a != b)
                .map_or_else(|| stored.lines().count().min(rendered.lines().count()) + 1, |n| n + 1);
            panic!("docs/usage.md differs from the clap definitions (from line {line}); regenerate it: {REGENERATE}");
        }
    }

    /// The page names every user subcommand and every flag of `run`, and no benchmark.
    #[test]
    fn usage_lists_every_user_flag_and_no_benchmark() {
        let page = render();
        for sub in ["run", "events", "generate", "compare", "demo", "quicklook"] {
            assert!(page.contains(&format!("## `sstclim {sub}`")), "{sub} missing");
        }
        assert!(!page.contains("bench-"), "a benchmark subcommand leaked into usage.md");
        let cli = Cli::command();
        let run = cli.find_subcommand("run").unwrap();
        for arg in run.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                let flag = format!("--{long}");
                let listed = page
                    .lines()
                    .filter(|l| l.starts_with("- `"))
                    .any(|l| l.split('`').nth(1).is_some_and(|sig| sig.split([' ', ',']).any(|w| w == flag)));
                assert!(listed, "{flag} has no entry");
            }
        }
        assert!(page.contains("- `--baseline <YEARS>` (required)"), "{page}");
    }
}
