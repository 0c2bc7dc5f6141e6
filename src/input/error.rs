//! Errors about input files. Every variant names the file, and the variable where one is
//! involved, so the one-line message tells the user exactly what to fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}: cannot open as NetCDF: {cause}", path.display())]
    Open { path: PathBuf, cause: netcdf::Error },

    #[error("{}: no variable '{var}' (variables: {available})", path.display())]
    NoSuchVariable { path: PathBuf, var: String, available: String },

    #[error("{}: several gridded variables ({candidates}); choose one with --var", path.display())]
    AmbiguousVariable { path: PathBuf, candidates: String },

    #[error("{}: no gridded numeric variable with latitude and longitude dimensions (variables: {available})", path.display())]
    NoGriddedVariable { path: PathBuf, available: String },

    #[error("{}: variable '{var}': {problem}", path.display())]
    BadVariable { path: PathBuf, var: String, problem: String },

    #[error("{}: variable '{var}' is {found}, but {} has {expected}", path.display(), first.display())]
    ShapeMismatch { path: PathBuf, var: String, found: String, expected: String, first: PathBuf },

    #[error(
        "{}: variable '{var}' has units '{found}', but {} has '{expected}': files in different units cannot be averaged together",
        path.display(), first.display()
    )]
    UnitsMismatch { path: PathBuf, var: String, found: String, expected: String, first: PathBuf },

    #[error("{}: {coord} coordinate differs from {} ({detail})", path.display(), first.display())]
    CoordMismatch { path: PathBuf, coord: String, first: PathBuf, detail: String },

    #[error("{}: variable '{var}': read failed: {cause}", path.display())]
    Read { path: PathBuf, var: String, cause: netcdf::Error },

    #[error(
        "{}: variable '{var}': {detail} differs from {}'s, and --pool i16 decodes every file with the first file's packing; use --pool f32 or f64",
        path.display(),
        first.display()
    )]
    PoolPacking { path: PathBuf, var: String, detail: String, first: PathBuf },
}
