//! The integration tests, one binary with a module per area: each test binary links
//! libnetcdf and libhdf5, so one binary links them once where one per file linked them 41
//! times. docs/testing.md names every module and what it covers
//! (`scripts/check-test-modules.py` keeps the two in step). Run one area or file with
//! `cargo test --release --features bench,test-hooks --test it -- run::hobday::`.
//!
//! The tests of every area share this process, so what a file once set for its own binary is
//! set here, once, before any test thread starts (see [`no_hdf5_file_locking`]).

mod cli;
mod common;
mod events;
mod input;
mod library;
mod mpi;
mod output;
mod run;
mod timeseries;
mod tools;

/// Tests open HDF5 files in this process while others spawn sstclim (and forked readers):
/// a child would inherit, and hold, the flock of a file open at that moment, and this
/// process's next open of that file would fail. So this process, like sstclim itself, does
/// without HDF5 file locking. The variable is set before `main` (an ELF constructor, as
/// the `ctor` crate makes), while this process has one thread: setting it once tests run would
/// race with libhdf5's `getenv` on other threads.
extern "C" fn no_hdf5_file_locking() {
    std::env::set_var("HDF5_USE_FILE_LOCKING", "FALSE");
}

#[used]
#[link_section = ".init_array"]
static NO_HDF5_FILE_LOCKING: extern "C" fn() = no_hdf5_file_locking;
