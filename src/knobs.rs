//! The `SSTCLIM_*` environment variables that change what a run does, read here (each once)
//! so that they are found in one place; the README's environment table documents them.

/// `SSTCLIM_TEST_FAIL_RENAME=N`: the N-th rename while publishing outputs fails with EIO (a
/// fault-injection hook for the tests of all-or-nothing publishing).
pub fn test_fail_rename() -> Option<usize> {
    std::env::var("SSTCLIM_TEST_FAIL_RENAME").ok()?.parse().ok().filter(|&n| n > 0)
}
