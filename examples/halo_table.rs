//! Prints the halo read overhead of the reference job (92 target days 152-243, half window 5,
//! 30 years) for 1..=16 ranks, as a markdown table (the README's), from the slice planner:
//! `cargo run --release --example halo_table [DOYS] [HALF_WINDOW] [MAX_RANKS]`.

use sstclim::calendar::Calendar;
use sstclim::dist::slices::{halo_markdown, halo_table};
use sstclim::plan::values::DoyList;
use sstclim::window::WindowSpec;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let doys: DoyList = args.first().map_or("152-243", String::as_str).parse().expect("days like 152-243");
    let half_window: u16 = args.get(1).map_or(Ok(5), |s| s.parse()).expect("a half window");
    let max_ranks: usize = args.get(2).map_or(Ok(16), |s| s.parse()).expect("a rank count");
    let spec = WindowSpec { years: 1991..=2020, doys: doys.0, half_window, calendar: Calendar::Ordinal };
    print!("{}", halo_markdown(&halo_table(&spec, 1..=max_ranks)));
}
