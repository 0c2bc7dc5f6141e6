//! What can go wrong in the events stage: a climatology file that does not fit the job, and
//! writing the outputs. Every message is one line naming the file and variable.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    #[error("{}: cannot open the climatology: {cause}", path.display())]
    Open { path: PathBuf, cause: netcdf::Error },
    #[error("{}: not a climatology file: {detail} (write one with `sstclim run --layout climatology`)", path.display())]
    NotClimatology { path: PathBuf, detail: String },
    #[error("{}: variable {var}: {detail}", path.display())]
    BadVariable { path: PathBuf, var: String, detail: String },
    #[error("{}: the climatology's {what} does not match the input's ({detail})", path.display())]
    Mismatch { path: PathBuf, what: &'static str, detail: String },
    #[error("{}: cannot read {var}: {cause}", path.display())]
    Read { path: PathBuf, var: String, cause: netcdf::Error },
    #[error("{}: cannot write {var}: {cause}", path.display())]
    Write { path: PathBuf, var: String, cause: netcdf::Error },
    #[error("{}: cannot write {var}: {cause}", path.display())]
    WriteIo { path: PathBuf, var: String, cause: std::io::Error },
}
