//! The command line for people and batch jobs: help text, the end-of-run report and progress.

mod help;
mod report;
