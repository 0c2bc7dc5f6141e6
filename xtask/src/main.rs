//! The command line of sstclim's source checks: one subcommand per rule, exit 1 and one line
//! per problem when the rule is broken, exit 2 on a usage or read error.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: xtask layers [SRC] | xtask fn-length [SRC]   (SRC defaults to src)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let src = PathBuf::from(args.get(1).map_or("src", String::as_str));
    let problems = match args.first().map(String::as_str) {
        Some("layers") => xtask::layers::check(&src),
        Some("fn-length") => xtask::fnlen::check(&src, xtask::fnlen::MAX_LINES).map(|long| {
            long.iter().map(|l| format!("{}:{} {} {} lines", l.file.display(), l.line, l.name, l.lines)).collect()
        }),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match problems {
        Ok(problems) => {
            for p in &problems {
                println!("{p}");
            }
            eprintln!("xtask {}: {} problem(s) in {}", args[0], problems.len(), src.display());
            if problems.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::from(2)
        }
    }
}
