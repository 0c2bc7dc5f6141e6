//! `sstclim demo`: the main job end to end on a small generated dataset. It generates the data
//! (once), runs the reference-job definition on it with bitwise verification against the
//! reference engine, prints the stage timing table, and draws quicklook maps.

use std::path::PathBuf;

use clap::Parser;

use crate::cli::{Cli, Command, DemoArgs, GenerateArgs, RunArgs};
use crate::error::Error;
use crate::input::{self, read_canonical, VarLayout};
use crate::pipeline::RunOutcome;
use crate::plan::JobPlan;
use crate::report::progress::Ui;
use crate::run::run;

/// What the demo produced.
#[derive(Debug)]
pub struct DemoOutcome {
    pub run: RunOutcome,
    pub maps: Vec<PathBuf>,
}

fn parse_generate(argv: &[String]) -> GenerateArgs {
    match Cli::parse_from(argv).command {
        Command::Generate(g) => g,
        _ => unreachable!("generate arguments"),
    }
}

fn parse_run(argv: &[String]) -> RunArgs {
    match Cli::parse_from(argv).command {
        Command::Run(r) => r,
        _ => unreachable!("run arguments"),
    }
}

/// Run the demo in `args.dir`.
pub fn demo(args: &DemoArgs, ui: &Ui) -> Result<DemoOutcome, Error> {
    let data = args.dir.join("data");
    let results = args.dir.join("results");
    let s = |x: &str| x.to_string();
    let gen = parse_generate(&[
        s("sstclim"),
        s("generate"),
        s("--output"),
        data.display().to_string(),
        s("--grid"),
        format!("{}x{}", args.grid.nlon, args.grid.nlat),
        s("--years"),
        s("1991-2020"),
        s("--doys"),
        s("147-248"),
        s("--dim-order"),
        s("lon-lat"),
    ]);
    eprintln!(
        "demo: dataset {} ({}x{}, 1991-2020, days 147-248, float64, lon-lat order)",
        data.display(),
        args.grid.nlon,
        args.grid.nlat
    );
    let g = crate::tools::generate::generate(&gen, ui)?;
    if g.up_to_date {
        eprintln!("demo: dataset already generated");
    } else {
        eprintln!("demo: generated {} files ({:.1} MB) in {:.1} s", g.files, g.bytes as f64 / 1e6, g.seconds);
    }
    let argv = vec![
        s("sstclim"),
        s("run"),
        s("--input"),
        data.display().to_string(),
        s("--output"),
        results.display().to_string(),
        s("--years"),
        s("1991-2020"),
        s("--doys"),
        s("152-243"),
        s("--half-window"),
        s("5"),
        s("--percentile"),
        s("90"),
        s("--method"),
        s("5"),
        s("--verify"),
        s("--overwrite"),
    ];
    let plan = JobPlan::from_args(&parse_run(&argv), argv.join(" "))?;
    eprintln!("demo: {}", plan.command_line);
    let outcome = run(&plan, ui)?;
    let mut maps = Vec::new();
    for stat in ["mean", "p90"] {
        let nc = results.join(format!("{stat}_doy{:03}.nc", args.map_doy));
        if !nc.exists() {
            continue;
        }
        let file = input::open(&nc)?;
        let layout = VarLayout::inspect(&file, &nc, Some(stat), true)?;
        let values = read_canonical(&file, &nc, &layout)?;
        let lat: Vec<f64> = file.variable("lat").and_then(|v| v.get_values::<f64, _>(..).ok()).unwrap_or_default();
        let ascending = lat.len() < 2 || lat[0] < lat[lat.len() - 1];
        let png = args.dir.join(format!("quicklook_{stat}_doy{:03}.png", args.map_doy));
        crate::tools::quicklook::write_map(&png, &values, layout.nlat(), layout.nlon(), ascending)
            .map_err(|cause| Error::Io { path: png.clone(), cause })?;
        maps.push(png);
    }
    Ok(DemoOutcome { run: outcome, maps })
}
