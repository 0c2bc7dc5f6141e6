//! Environment knobs read in one place (each is listed in the README's table of `SSTCLIM_*`
//! variables). Other modules ask here instead of reading the environment themselves.

use std::time::Duration;

/// `SSTCLIM_READER_TIMEOUT`: seconds a reader or checking child process may go without
/// progress before it is killed and named (default [`DEFAULT_READER_TIMEOUT`]).
pub const READER_TIMEOUT_ENV: &str = "SSTCLIM_READER_TIMEOUT";

/// A reader process reads one file in well under a second on any sane file system; two
/// minutes without a single finished file means it is stopped or stuck (a hung mount, a
/// SIGSTOP), not slow.
pub const DEFAULT_READER_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a child process may make no progress ([`READER_TIMEOUT_ENV`], seconds, fractions
/// allowed; unset, unparsable or not positive gives the default).
pub fn reader_timeout() -> Duration {
    parse_timeout(std::env::var(READER_TIMEOUT_ENV).ok().as_deref())
}

fn parse_timeout(value: Option<&str>) -> Duration {
    value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map_or(DEFAULT_READER_TIMEOUT, Duration::from_secs_f64)
}

/// `SSTCLIM_TEST_FAIL_RENAME=N`: the N-th move of a new file into an output directory fails
/// with EIO (a fault-injection hook for the tests of all-or-nothing publishing).
pub fn test_fail_rename() -> Option<usize> {
    std::env::var("SSTCLIM_TEST_FAIL_RENAME").ok()?.parse().ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_timeout_parses_seconds_and_falls_back_to_the_default() {
        assert_eq!(parse_timeout(None), DEFAULT_READER_TIMEOUT);
        assert_eq!(parse_timeout(Some("2")), Duration::from_secs(2));
        assert_eq!(parse_timeout(Some(" 0.5 ")), Duration::from_millis(500));
        for bad in ["0", "-3", "soon", "inf", "NaN", ""] {
            assert_eq!(parse_timeout(Some(bad)), DEFAULT_READER_TIMEOUT, "{bad}");
        }
    }
}

// --- engine helper: test backends ---

/// `SSTCLIM_REQUIRE_BACKENDS`: a comma list of backends (`cuda`, `hip`, `cpu`, ...) this
/// machine must run (the GPU node sets `cuda`): the tests named by backend fail, instead of
/// being skipped, where one of these cannot run.
pub const REQUIRE_BACKENDS_ENV: &str = "SSTCLIM_REQUIRE_BACKENDS";

/// Whether [`REQUIRE_BACKENDS_ENV`] names `backend` (case and spaces ignored; unset: none is
/// required).
pub fn backend_required(backend: &str) -> bool {
    names_backend(std::env::var(REQUIRE_BACKENDS_ENV).ok().as_deref(), backend)
}

fn names_backend(list: Option<&str>, backend: &str) -> bool {
    list.is_some_and(|l| l.split(',').any(|b| b.trim().eq_ignore_ascii_case(backend)))
}

#[cfg(test)]
mod backend_tests {
    #[test]
    fn required_backends_are_a_comma_list() {
        let named = super::names_backend;
        assert!(named(Some("cuda"), "cuda") && named(Some("hip, CUDA"), "cuda") && named(Some(" cpu ,hip"), "hip"));
        assert!(!named(None, "cuda") && !named(Some(""), "cuda") && !named(Some("cudax,hip"), "cuda"));
    }
}
