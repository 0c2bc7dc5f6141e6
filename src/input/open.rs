//! Opening an input file through libnetcdf, with the error naming the file, and keeping
//! libhdf5 from printing its error stack on stderr.
//!
//! Why it exists apart: every path that calls the libraries (the library read path, the forked
//! readers, the direct path's libhdf5 queries, the tests) opens files the same way; kept below
//! them, none imports the stage's facade for it.

use std::path::Path;

use super::error::InputError;

/// Open `path` with libnetcdf, naming the file in the error.
pub fn open(path: &Path) -> Result<netcdf::File, InputError> {
    silence_hdf5();
    netcdf::open(path).map_err(|cause| InputError::Open { path: path.to_path_buf(), cause })
}

/// Stop libhdf5 from printing its error stack on stderr. libnetcdf probes for optional
/// attributes and handles the failures itself, but some HDF5 builds print each probe; our
/// errors carry the file and cause instead. Thread-safe HDF5 builds keep this setting per
/// thread, so it is made once per thread.
pub fn silence_hdf5() {
    thread_local!(static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if DONE.with(|d| d.replace(true)) {
        return;
    }
    {
        let _lock = hdf5_metno_sys::LOCK.lock();
        // SAFETY: H5Eset_auto2 with the default stack and no handler only changes HDF5's
        // global error-reporting setting; the library lock serializes it with other calls.
        unsafe {
            hdf5_metno_sys::h5e::H5Eset_auto2(hdf5_metno_sys::h5e::H5E_DEFAULT, None, std::ptr::null_mut());
        }
    }
}
