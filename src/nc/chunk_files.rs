//! HDF5 files held open for direct chunk writes (`H5Dwrite_chunk`) during one call of the
//! compressed write paths (`super::chunked`, the events' compressed catalogue): each file
//! opened once, on its first chunk, and each of its variables once; chunks are handed to HDF5
//! already filtered, one call at a time under the library lock.
//!
//! Why a module of its own: the compressed path's chunk coding and its HDF5 bookkeeping are
//! separate concerns (and the first module would exceed the size limit with both).

use std::ffi::CString;
use std::path::Path;

/// HDF5 files open for chunk writes during one call (opened on their first chunk), and their
/// datasets (several variables of one file are written through the file's one handle).
#[derive(Default)]
pub(crate) struct Files {
    files: Vec<(std::path::PathBuf, hdf5_metno_sys::h5i::hid_t)>,
    open: Vec<(std::path::PathBuf, String, hdf5_metno_sys::h5i::hid_t)>,
}

impl Files {
    /// Write one filtered chunk (`mask`: HDF5's filter mask) at element `offset` (one per
    /// dimension of the variable) of `var` in `path`.
    pub(crate) fn write_at(
        &mut self,
        path: &Path,
        var: &str,
        offset: &[u64],
        mask: u32,
        bytes: &[u8],
    ) -> Result<(), String> {
        use hdf5_metno_sys::{h5d, h5p};
        let _lock = hdf5_metno_sys::LOCK.lock();
        let at = self.dataset(path, var)?;
        let d = self.open[at].2;
        // SAFETY: `d` is an open dataset; `offset` has its rank (the caller's variable's); `bytes`
        // outlives the call.
        let status = unsafe {
            h5d::H5Dwrite_chunk(d, h5p::H5P_DEFAULT, mask, offset.as_ptr(), bytes.len(), bytes.as_ptr().cast())
        };
        if status < 0 {
            return Err(format!("HDF5's direct chunk write at {offset:?} failed"));
        }
        Ok(())
    }

    /// The index in `open` of `var` of `path`, opened on first use (its file too). The caller
    /// holds the library lock.
    fn dataset(&mut self, path: &Path, var: &str) -> Result<usize, String> {
        use hdf5_metno_sys::{h5d, h5f, h5p};
        let at = match self.open.iter().position(|(p, v, _)| p == path && v == var) {
            Some(i) => i,
            None => {
                let cvar = CString::new(format!("/{var}")).map_err(|e| e.to_string())?;
                let f = match self.files.iter().find(|(p, _)| p == path) {
                    Some(&(_, f)) => f,
                    None => {
                        let cpath = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
                        crate::input::silence_hdf5();
                        // SAFETY: plain HDF5 calls on handles created here (closed in
                        // `close_all`), under the library lock.
                        let f = unsafe {
                            hdf5_metno_sys::h5::H5open();
                            let fapl = h5p::H5Pcreate(*h5p::H5P_CLS_FILE_ACCESS);
                            if fapl >= 0 {
                                // see `with_hdf5_file`: a forked reader may hold an inherited lock
                                h5p::H5Pset_file_locking(fapl, 0, 1);
                            }
                            let f = h5f::H5Fopen(
                                cpath.as_ptr(),
                                h5f::H5F_ACC_RDWR,
                                if fapl >= 0 { fapl } else { h5p::H5P_DEFAULT },
                            );
                            if fapl >= 0 {
                                h5p::H5Pclose(fapl);
                            }
                            f
                        };
                        if f < 0 {
                            return Err("HDF5 cannot open it for writing".into());
                        }
                        self.files.push((path.to_path_buf(), f));
                        f
                    }
                };
                // SAFETY: `f` is a file open here (closed in `close_all`), under the lock.
                let d = unsafe { h5d::H5Dopen2(f, cvar.as_ptr(), h5p::H5P_DEFAULT) };
                if d < 0 {
                    return Err(format!("no HDF5 dataset /{var}"));
                }
                self.open.push((path.to_path_buf(), var.to_string(), d));
                self.open.len() - 1
            }
        };
        Ok(at)
    }

    /// The files opened so far (those the call wrote chunks to).
    pub(crate) fn paths(&self) -> Vec<std::path::PathBuf> {
        self.files.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Close every file (HDF5 writes the chunk index then); the first that fails.
    pub(crate) fn close_all(&mut self) -> Result<(), (std::path::PathBuf, String)> {
        use hdf5_metno_sys::{h5d, h5f};
        let _lock = hdf5_metno_sys::LOCK.lock();
        let mut first = Ok(());
        let mut failed = |path: std::path::PathBuf| {
            if first.is_ok() {
                first = Err((path, "HDF5 could not close it (writing its chunk index failed)".to_string()));
            }
        };
        for (path, _, d) in self.open.drain(..) {
            // SAFETY: handles opened in `write`, closed once here, under the lock.
            if unsafe { h5d::H5Dclose(d) } < 0 {
                failed(path);
            }
        }
        for (path, f) in self.files.drain(..) {
            // SAFETY: as above; every dataset of the file is closed.
            if unsafe { h5f::H5Fclose(f) } < 0 {
                failed(path);
            }
        }
        first
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = self.close_all();
    }
}
