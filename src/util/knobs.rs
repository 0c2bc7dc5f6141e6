//! Every `SSTCLIM_*` environment variable, read here and nowhere else: one typed accessor per
//! variable, each listed in [`KNOBS`] with its meaning and default (docs/environment.md holds the same
//! table, checked by a test). Other modules ask here instead of reading the
//! environment themselves, so that what can change a run is all in one place.
//!
//! Three kinds: the product's own settings (always read); measuring knobs (kernel and pipeline
//! tuning, read only in builds with the `bench` feature); and test hooks (fault injection, read
//! only with the `test-hooks` feature). Without its feature an accessor returns the default
//! and never looks at the environment, so the product's default build cannot be steered off
//! its measured path by a stray variable. [`set_knobs`] lists what a run took from the
//! environment, for its report.

use std::ffi::OsString;
use std::time::Duration;

/// Which builds read a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Every build.
    Product,
    /// Builds with the `bench` feature (measuring knobs).
    Bench,
    /// Builds with the `test-hooks` feature (fault injection for the integration tests).
    TestHooks,
    /// Not read by the program: build.rs, the test harness or a script reads it (`where`).
    Outside(&'static str),
}

impl Gate {
    /// Whether this build reads variables of this gate.
    pub const fn in_build(self) -> bool {
        match self {
            Gate::Product => true,
            Gate::Bench => cfg!(feature = "bench"),
            Gate::TestHooks => cfg!(feature = "test-hooks"),
            Gate::Outside(_) => false,
        }
    }

    /// The documentation table's "read by" column.
    pub fn describe(self) -> &'static str {
        match self {
            Gate::Product => "every build",
            Gate::Bench => "feature `bench`",
            Gate::TestHooks => "feature `test-hooks`",
            Gate::Outside(place) => place,
        }
    }
}

/// One environment variable: its name, which builds read it, what it does, its default.
#[derive(Clone, Copy, Debug)]
pub struct Knob {
    pub name: &'static str,
    pub gate: Gate,
    pub meaning: &'static str,
    pub default: &'static str,
}

impl Knob {
    /// The value as text (`None`: unset, not valid Unicode, or not read by this build).
    fn text(&self) -> Option<String> {
        if self.gate.in_build() {
            std::env::var(self.name).ok()
        } else {
            None
        }
    }

    /// The value as the OS gave it (`None`: unset or not read by this build).
    fn os(&self) -> Option<OsString> {
        if self.gate.in_build() {
            std::env::var_os(self.name)
        } else {
            None
        }
    }
}

// ---- the product's settings ---------------------------------------------------------------

/// `SSTCLIM_RATES`.
pub const RATES: Knob = Knob {
    name: "SSTCLIM_RATES",
    gate: Gate::Product,
    meaning: "The file of measured pipeline rates that chooses `--segments` (`--rates` overrides it); \
              `none` neither reads nor records rates.",
    default: "`$XDG_CACHE_HOME/sstclim/rates.json`, else `~/.cache/sstclim/rates.json`",
};

/// `SSTCLIM_KERNEL_CACHE`.
pub const KERNEL_CACHE: Knob = Knob {
    name: "SSTCLIM_KERNEL_CACHE",
    gate: Gate::Product,
    meaning: "Directory of compiled CUDA kernels kept between runs; `none` turns the cache off.",
    default: "`$XDG_CACHE_HOME/sstclim/kernels`, else `~/.cache/sstclim/kernels`",
};

/// `SSTCLIM_READER_TIMEOUT`: seconds a reader or checking child process may go without
/// progress before it is killed and named (default [`DEFAULT_READER_TIMEOUT`]).
pub const READER_TIMEOUT: Knob = Knob {
    name: "SSTCLIM_READER_TIMEOUT",
    gate: Gate::Product,
    meaning: "Seconds (fractions allowed) a reader or header-checking child process may make no \
              progress before it is killed and named.",
    default: "120",
};

/// `SSTCLIM_NO_MPI`.
pub const NO_MPI: Knob = Knob {
    name: "SSTCLIM_NO_MPI",
    gate: Gate::Product,
    meaning: "Set (any value): `sstclim run` does not start MPI even when an MPI launcher started it \
              (each process is a job of one rank).",
    default: "unset (MPI when launched by mpirun/srun)",
};

/// `SSTCLIM_H5META`. In every build, not only for measuring: sstclim's own HDF5 metadata
/// parser reads files written by any library version, and this is the user's way back to
/// libhdf5 for a file it misreads, without a rebuild.
pub const H5META: Knob = Knob {
    name: "SSTCLIM_H5META",
    gate: Gate::Product,
    meaning: "`off` (or `0`, `false`, `library`): the direct read path locates the variable in HDF5 \
              files through libhdf5 instead of sstclim's own metadata parser.",
    default: "on",
};

// ---- measuring knobs (feature `bench`) ------------------------------------------------------
// Each changes how fast a run goes, never its results; they exist to measure one choice
// against another, so the product build does not read them.

/// `SSTCLIM_CUDA_SCHED`.
pub const CUDA_SCHED: Knob = Knob {
    name: "SSTCLIM_CUDA_SCHED",
    gate: Gate::Bench,
    meaning: "`spin`, `yield` or `blocking`: how host threads wait for CUDA device work.",
    default: "the driver's (spins while cores are idle)",
};

/// `SSTCLIM_CUDA_MAXRREG`.
pub const CUDA_MAXRREG: Knob = Knob {
    name: "SSTCLIM_CUDA_MAXRREG",
    gate: Gate::Bench,
    meaning: "NVRTC `--maxrregcount` for the climatology kernel (launch bounds override it).",
    default: "none",
};

/// `SSTCLIM_CUDA_MIN_BLOCKS`.
pub const CUDA_MIN_BLOCKS: Knob = Knob {
    name: "SSTCLIM_CUDA_MIN_BLOCKS",
    gate: Gate::Bench,
    meaning: "Minimum blocks per multiprocessor in the CUDA kernel's launch bounds (`-DSC_MIN_BLOCKS`).",
    default: "the kernel's own",
};

/// `SSTCLIM_CUDA_DEFINES`.
pub const CUDA_DEFINES: Knob = Knob {
    name: "SSTCLIM_CUDA_DEFINES",
    gate: Gate::Bench,
    meaning: "Extra preprocessor definitions for the CUDA kernel (`\"A B=1\"`), for variants kept behind `#ifdef`.",
    default: "none",
};

/// `SSTCLIM_CUDA_LINEINFO`.
pub const CUDA_LINEINFO: Knob = Knob {
    name: "SSTCLIM_CUDA_LINEINFO",
    gate: Gate::Bench,
    meaning: "Set (any value): source lines in the CUDA machine code (`-lineinfo`), for profilers.",
    default: "off",
};

/// `SSTCLIM_CUDA_CARVEOUT`.
pub const CUDA_CARVEOUT: Knob = Knob {
    name: "SSTCLIM_CUDA_CARVEOUT",
    gate: Gate::Bench,
    meaning: "Percent of each multiprocessor's on-chip memory given to shared memory (the rest is L1).",
    default: "the least the resident blocks need",
};

/// `SSTCLIM_CUDA_SPECIALIZE`.
pub const CUDA_SPECIALIZE: Knob = Knob {
    name: "SSTCLIM_CUDA_SPECIALIZE",
    gate: Gate::Bench,
    meaning: "`0`: compile one generic CUDA kernel instead of one for the job's launch constants.",
    default: "on",
};

/// `SSTCLIM_I16_ORDERED`.
pub const I16_ORDERED: Knob = Knob {
    name: "SSTCLIM_I16_ORDERED",
    gate: Gate::Bench,
    meaning: "`0`: int16 pools use the float64-keyed GPU kernels instead of the ordered int16 ones.",
    default: "on",
};

/// `SSTCLIM_STAGING_ROWS`.
pub const STAGING_ROWS: Knob = Knob {
    name: "SSTCLIM_STAGING_ROWS",
    gate: Gate::Bench,
    meaning: "Pinned staging rows per reading thread for a device-resident pool.",
    default: "3",
};

/// `SSTCLIM_STAGING_PIN`.
pub const STAGING_PIN: Knob = Knob {
    name: "SSTCLIM_STAGING_PIN",
    gate: Gate::Bench,
    meaning: "`register`: a device-resident pool's staging rows are heap memory registered with the device instead of page-locked memory the driver allocates.",
    default: "alloc",
};

/// `SSTCLIM_READER_NICE`.
pub const READER_NICE: Knob = Knob {
    name: "SSTCLIM_READER_NICE",
    gate: Gate::Bench,
    meaning: "Nice increment (0-19) of the direct reader threads, so the threads they feed run first.",
    default: "0",
};

/// `SSTCLIM_EARLY_WRITEBACK`.
pub const EARLY_WRITEBACK: Knob = Knob {
    name: "SSTCLIM_EARLY_WRITEBACK",
    gate: Gate::Bench,
    meaning: "`off`: the direct writer leaves every output's pages to the final fsync instead of starting their writeback as each day's field is written.",
    default: "on",
};

/// `SSTCLIM_DEFER_START`.
pub const DEFER_START: Knob = Knob {
    name: "SSTCLIM_DEFER_START",
    gate: Gate::Bench,
    meaning: "`off`: a requested GPU engine starts before the pipeline instead of on its own thread beside it.",
    default: "deferred",
};

/// `SSTCLIM_EVENTS_MIN_BANDS`.
pub const EVENTS_MIN_BANDS: Knob = Knob {
    name: "SSTCLIM_EVENTS_MIN_BANDS",
    gate: Gate::Bench,
    meaning: "Bands `sstclim events` cuts each rank's rows into at least, when they fit fewer (1: one band, \
              read before it is detected, nothing overlapped).",
    default: "4",
};

// ---- test hooks (feature `test-hooks`) ------------------------------------------------------

/// `SSTCLIM_TEST_DEFERRED_START`.
pub const TEST_DEFERRED_START: Knob = Knob {
    name: "SSTCLIM_TEST_DEFERRED_START",
    gate: Gate::TestHooks,
    meaning: "With `--backend cpu`: `cpu` makes the CPU engine pose as a device taking 1.5 s to start, \
              `fail` as one failing to start.",
    default: "unset",
};

/// `SSTCLIM_TEST_READER_SIGNAL`.
pub const TEST_READER_SIGNAL: Knob = Knob {
    name: "SSTCLIM_TEST_READER_SIGNAL",
    gate: Gate::TestHooks,
    meaning: "`SLOT` or `SLOT:stop`: the forked reader given that pool slot kills (SIGKILL) or stops \
              (SIGSTOP) itself before reading it (a stopped one is killed after `SSTCLIM_READER_TIMEOUT`).",
    default: "unset",
};

/// `SSTCLIM_TEST_FAIL_RENAME`.
pub const TEST_FAIL_RENAME: Knob = Knob {
    name: "SSTCLIM_TEST_FAIL_RENAME",
    gate: Gate::TestHooks,
    meaning: "`N`: the N-th move of a new file into an output directory fails with EIO; `N:SIGINT` (or `SIGTERM`, \
              `SIGHUP`): that signal reaches the process at the N-th move instead.",
    default: "unset",
};

// ---- read outside the program ---------------------------------------------------------------

/// `SSTCLIM_HIP_ARCHS` (build.rs reads it: a build-time setting).
pub const HIP_ARCHS: Knob = Knob {
    name: "SSTCLIM_HIP_ARCHS",
    gate: Gate::Outside("build.rs (feature `hip`)"),
    meaning: "AMD GPU architectures (comma separated) the HIP kernels are compiled for.",
    default: "`gfx906,gfx90a`",
};

/// `SSTCLIM_TEST_BIN` (the integration tests read it).
pub const TEST_BIN: Knob = Knob {
    name: "SSTCLIM_TEST_BIN",
    gate: Gate::Outside("integration tests"),
    meaning: "The sstclim binary the integration tests run (test binaries carried to a GPU node).",
    default: "the one cargo built",
};

/// `SSTCLIM_REQUIRE_BACKENDS` (the tests named by backend read it, [`backend_required`]).
pub const REQUIRE_BACKENDS: Knob = Knob {
    name: "SSTCLIM_REQUIRE_BACKENDS",
    gate: Gate::Outside("the tests named by backend"),
    meaning: "Comma list of backends (`cuda`, `hip`) this machine must run: their tests fail instead of printing SKIPPED where the backend cannot run (the GPU node sets `cuda`).",
    default: "none required",
};

/// `SSTCLIM_CUDA_TOOLS` (scripts/kernel-sass.sh reads it).
pub const CUDA_TOOLS: Knob = Knob {
    name: "SSTCLIM_CUDA_TOOLS",
    gate: Gate::Outside("scripts/kernel-sass.sh"),
    meaning: "Where the script keeps the CUDA tools it downloads.",
    default: "`~/.cache/sstclim-cuda-tools`",
};

/// `SSTCLIM_BLESS` (the unit tests that compare a generated document with its file read it,
/// [`bless_docs`]).
pub const BLESS: Knob = Knob {
    name: "SSTCLIM_BLESS",
    gate: Gate::Outside("the generated-document tests"),
    meaning: "Set (any value): the unit tests of generated documents (`docs/usage.md`) rewrite the file instead of failing where it differs.",
    default: "unset (they fail)",
};

/// Every variable, in the documentation table's order.
pub const KNOBS: &[Knob] = &[
    RATES,
    KERNEL_CACHE,
    READER_TIMEOUT,
    NO_MPI,
    H5META,
    CUDA_SCHED,
    CUDA_MAXRREG,
    CUDA_MIN_BLOCKS,
    CUDA_DEFINES,
    CUDA_LINEINFO,
    CUDA_CARVEOUT,
    CUDA_SPECIALIZE,
    I16_ORDERED,
    STAGING_ROWS,
    STAGING_PIN,
    READER_NICE,
    EARLY_WRITEBACK,
    DEFER_START,
    EVENTS_MIN_BANDS,
    TEST_DEFERRED_START,
    TEST_READER_SIGNAL,
    TEST_FAIL_RENAME,
    HIP_ARCHS,
    TEST_BIN,
    REQUIRE_BACKENDS,
    CUDA_TOOLS,
    BLESS,
];

// ---- the product's accessors -----------------------------------------------------------------

/// `SSTCLIM_RATES` as given (the rates module resolves it, see [`location_env`]).
pub fn rates() -> Option<OsString> {
    RATES.os()
}

/// `SSTCLIM_KERNEL_CACHE` as given (the kernel cache resolves it, see [`location_env`]).
pub fn kernel_cache() -> Option<OsString> {
    KERNEL_CACHE.os()
}

/// The environment as the resolvers of the rates file and the kernel cache see it: their
/// knobs through the accessors above, and the base directories they fall back to
/// (`XDG_CACHE_HOME`, `HOME`). Any other name reads as unset.
pub fn location_env(name: &str) -> Option<OsString> {
    match name {
        n if n == RATES.name => rates(),
        n if n == KERNEL_CACHE.name => kernel_cache(),
        "XDG_CACHE_HOME" | "HOME" => std::env::var_os(name),
        _ => {
            debug_assert!(false, "{name} is not a location variable");
            None
        }
    }
}

/// A reader process reads one file in well under a second on any sane file system; two
/// minutes without a single finished file means it is stopped or stuck (a hung mount, a
/// SIGSTOP), not slow.
pub const DEFAULT_READER_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a child process may make no progress ([`READER_TIMEOUT`], seconds, fractions
/// allowed; unset, unparsable or not positive gives the default).
pub fn reader_timeout() -> Duration {
    parse_timeout(READER_TIMEOUT.text().as_deref())
}

fn parse_timeout(value: Option<&str>) -> Duration {
    value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map_or(DEFAULT_READER_TIMEOUT, Duration::from_secs_f64)
}

/// Whether `SSTCLIM_NO_MPI` keeps `run` from starting MPI.
pub fn no_mpi() -> bool {
    NO_MPI.os().is_some()
}

/// Whether HDF5 metadata is parsed by sstclim ([`H5META`]: `off`, `0`, `false` or `library`,
/// in any case, turn the parser off).
pub fn h5meta_parser() -> bool {
    let v = H5META.text().unwrap_or_default().to_ascii_lowercase();
    !matches!(v.as_str(), "off" | "0" | "false" | "library")
}

// ---- measuring accessors (the default without the `bench` feature) ---------------------------

/// [`CUDA_SCHED`] as given (the CUDA backend parses it and warns about other values).
pub fn cuda_sched() -> Option<String> {
    CUDA_SCHED.text()
}

/// [`CUDA_MAXRREG`] as given (handed to NVRTC as it is).
pub fn cuda_maxrreg() -> Option<String> {
    CUDA_MAXRREG.text()
}

/// [`CUDA_MIN_BLOCKS`] (`None`: unset or not a number).
pub fn cuda_min_blocks() -> Option<u32> {
    CUDA_MIN_BLOCKS.text()?.parse().ok()
}

/// [`CUDA_DEFINES`]: whitespace-separated definitions.
pub fn cuda_defines() -> Option<String> {
    CUDA_DEFINES.text()
}

/// Whether [`CUDA_LINEINFO`] is set.
pub fn cuda_lineinfo() -> bool {
    CUDA_LINEINFO.os().is_some()
}

/// [`CUDA_CARVEOUT`] in percent (`None`: unset or not a number).
pub fn cuda_carveout() -> Option<i32> {
    CUDA_CARVEOUT.text()?.parse().ok()
}

/// Whether the CUDA kernel is compiled for the job's launch constants ([`CUDA_SPECIALIZE`]
/// `0` turns it off).
pub fn cuda_specialize() -> bool {
    CUDA_SPECIALIZE.text().map_or(true, |v| v != "0")
}

/// Whether ordered int16 kernels may be used ([`I16_ORDERED`] `0` turns them off).
pub fn i16_ordered() -> bool {
    I16_ORDERED.text().map_or(true, |v| v != "0")
}

/// [`EVENTS_MIN_BANDS`] (`None`: unset, not a number, or not read by this build).
pub fn events_min_bands() -> Option<usize> {
    EVENTS_MIN_BANDS.text()?.parse().ok()
}

/// [`STAGING_ROWS`]: staging rows per reading thread (`None`: unset or not a number; the
/// pipeline has the default).
pub fn staging_rows() -> Option<usize> {
    STAGING_ROWS.text()?.parse().ok()
}

/// [`STAGING_PIN`]: whether staging rows come from the device driver's page-locked
/// allocation (the default) rather than heap memory registered with the device.
pub fn staging_from_driver() -> bool {
    STAGING_PIN.text().as_deref() != Some("register")
}

/// Whether [`EARLY_WRITEBACK`] is on (anything but `off`).
pub fn early_writeback() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| EARLY_WRITEBACK.text().as_deref() != Some("off"))
}

/// [`READER_NICE`] (0 when unset or not a number from 0 to 19).
pub fn reader_nice() -> i32 {
    READER_NICE.text().and_then(|v| v.parse().ok()).filter(|n| (0..=19).contains(n)).unwrap_or(0)
}

/// Whether a requested GPU engine starts on its own thread beside the pipeline (the default;
/// [`DEFER_START`] `off` starts it before).
pub fn defer_start() -> bool {
    DEFER_START.text().as_deref() != Some("off")
}

// ---- test hooks (inert without the `test-hooks` feature) -------------------------------------

/// [`TEST_DEFERRED_START`]: `cpu` or `fail`.
pub fn test_deferred_start() -> Option<String> {
    TEST_DEFERRED_START.text()
}

/// [`TEST_READER_SIGNAL`] as given (`SLOT` or `SLOT:stop`; the forked readers parse it).
pub fn test_reader_signal() -> Option<String> {
    TEST_READER_SIGNAL.text()
}

/// [`TEST_FAIL_RENAME`] as given (`N` or `N:SIGNAL`; `output::publish` parses it).
pub fn test_fail_rename() -> Option<String> {
    TEST_FAIL_RENAME.text()
}

// ---- what a run took from the environment ----------------------------------------------------

/// The variables that are set and read by this build, with their values, in [`KNOBS`]'
/// order (for the run report and the log).
pub fn set_knobs() -> Vec<(&'static str, String)> {
    KNOBS.iter().filter_map(|k| Some((k.name, k.os()?.to_string_lossy().into_owned()))).collect()
}

/// The known variables that are set but that this build does not read (a measuring knob or
/// test hook without its feature).
pub fn ignored_knobs() -> Vec<&'static Knob> {
    KNOBS
        .iter()
        .filter(|k| matches!(k.gate, Gate::Bench | Gate::TestHooks))
        .filter(|k| !k.gate.in_build())
        .filter(|k| std::env::var_os(k.name).is_some())
        .collect()
}

/// One INFO line naming the variables a run takes from the environment, and a warning for
/// each that this build ignores (a measurement run on a build without `bench` would otherwise
/// measure the default silently).
pub fn log() {
    let set = set_knobs();
    if !set.is_empty() {
        let shown: Vec<String> = set.iter().map(|(k, v)| format!("{k}={v}")).collect();
        tracing::info!("environment: {}", shown.join(" "));
    }
    for k in ignored_knobs() {
        let feature = if k.gate == Gate::Bench { "bench" } else { "test-hooks" };
        tracing::warn!("{} is set but ignored: this sstclim was built without the `{feature}` feature", k.name);
    }
}

/// The documentation table of every variable (docs/environment.md holds it).
pub fn markdown_table() -> String {
    let mut out = String::from("| Variable | Read by | Meaning | Default |\n|---|---|---|---|\n");
    for k in KNOBS {
        out.push_str(&format!("| `{}` | {} | {} | {} |\n", k.name, k.gate.describe(), k.meaning, k.default));
    }
    out
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

    #[test]
    fn names_are_unique_and_prefixed() {
        for (i, k) in KNOBS.iter().enumerate() {
            assert!(k.name.starts_with("SSTCLIM_"), "{}", k.name);
            assert!(KNOBS[..i].iter().all(|o| o.name != k.name), "{} twice", k.name);
            assert!(!k.meaning.contains('|') && !k.default.contains('|'), "{}: '|' breaks the table", k.name);
        }
    }

    /// docs/environment.md's table of environment variables is this list.
    #[test]
    fn the_documented_table_is_the_list_of_knobs() {
        let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/environment.md");
        let text = std::fs::read_to_string(page).unwrap();
        assert!(text.contains(&markdown_table()), "docs/environment.md must hold this table:\n{}", markdown_table());
    }

    /// Nothing outside this module reads an `SSTCLIM_*` variable.
    #[test]
    fn no_other_module_reads_a_knob() {
        fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("util/knobs.rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for (n, line) in text.lines().enumerate() {
                        let code = line.split("//").next().unwrap_or("");
                        if code.contains("env::var") && code.contains("\"SSTCLIM_") {
                            found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut found);
        assert!(found.is_empty(), "read SSTCLIM_* through util::knobs:\n{}", found.join("\n"));
    }
}

// ---- the tests' settings -----------------------------------------------------------------------

/// Whether [`REQUIRE_BACKENDS`] names `backend` (case and spaces ignored; unset: none is
/// required).
pub fn backend_required(backend: &str) -> bool {
    names_backend(std::env::var(REQUIRE_BACKENDS.name).ok().as_deref(), backend)
}

fn names_backend(list: Option<&str>, backend: &str) -> bool {
    list.is_some_and(|l| l.split(',').any(|b| b.trim().eq_ignore_ascii_case(backend)))
}

/// Whether [`BLESS`] is set: a generated document's test rewrites its file.
pub fn bless_docs() -> bool {
    std::env::var_os(BLESS.name).is_some()
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
