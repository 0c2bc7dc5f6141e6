//! The other subcommands and the shipped scripts: `compare`, `quicklook`, the Slurm scripts.

mod compare;
mod quicklook;
mod slurm_scripts;
