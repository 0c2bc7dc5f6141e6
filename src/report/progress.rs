//! Progress bars, shown only when stderr is a terminal and not `--quiet`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// How the run talks to the user.
#[derive(Clone, Copy, Debug)]
pub struct Ui {
    pub quiet: bool,
    pub bars: bool,
}

impl Ui {
    pub fn new(quiet: bool) -> Ui {
        Ui { quiet, bars: !quiet && std::io::stderr().is_terminal() }
    }

    /// A progress bar over `len` items, or a hidden one.
    pub fn bar(&self, len: u64, message: &str) -> ProgressBar {
        if !self.bars {
            return ProgressBar::hidden();
        }
        let style = ProgressStyle::with_template("{msg:>14} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        ProgressBar::new(len).with_style(style).with_message(message.to_string())
    }

    /// A ticking spinner for a stage without countable steps, or a hidden one.
    pub fn spinner(&self, message: &str) -> ProgressBar {
        if !self.bars {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new_spinner().with_message(message.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        bar
    }
}
