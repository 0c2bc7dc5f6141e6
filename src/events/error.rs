//! What can go wrong in the events stage: reading a part another band or rank wrote, a device
//! failing to detect a band's events, and writing the outputs (a climatology file that does not
//! fit the job is `crate::input::climatology::ClimatologyError`). Every message is one line
//! naming the file and variable (or the device and the call that failed).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    #[error("{}: cannot open the climatology: {cause}", path.display())]
    Open { path: PathBuf, cause: netcdf::Error },
    #[error("{}: variable {var}: {detail}", path.display())]
    BadVariable { path: PathBuf, var: String, detail: String },
    #[error("{}: cannot read {var}: {cause}", path.display())]
    Read { path: PathBuf, var: String, cause: netcdf::Error },
    #[error("{}: cannot write {var}: {cause}", path.display())]
    Write { path: PathBuf, var: String, cause: netcdf::Error },
    #[error("{}: cannot write {var}: {cause}", path.display())]
    WriteIo { path: PathBuf, var: String, cause: std::io::Error },
    #[error("detecting events on the GPU: {0}")]
    Device(#[from] crate::engine::gpu::GpuError),
}
