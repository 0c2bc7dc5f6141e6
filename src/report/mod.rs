//! What a run tells its user: the stage timings and run report, and progress on a terminal.

pub mod events;
pub mod progress;
pub mod shares;
pub mod timing;

/// Write `value` as pretty JSON and a newline (a value that cannot be serialized is an
/// `InvalidData` error; none of the reports' types can fail).
pub fn write_json<T: serde::Serialize>(value: &T, path: &std::path::Path) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}
