//! The event kernel's argument block, laid out as `EventParams` in `kernels/events.hip`
//! (every field 8 bytes, in the same order: no padding for the two compilers to disagree on),
//! kept apart so that its layout is checked against the kernel's in one place.

use crate::engine::gpu::DevPtr;

/// `EventParams` of kernels/events.hip: same fields, same order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct EventParams {
    pub pool: DevPtr,
    pub table: DevPtr,
    pub slot_of_day: DevPtr,
    pub doy: DevPtr,
    pub year: DevPtr,
    pub mean: DevPtr,
    pub thresh: DevPtr,
    pub counts: DevPtr,
    pub offsets: DevPtr,
    pub ints: DevPtr,
    pub floats: DevPtr,
    pub category: DevPtr,
    pub acc: DevPtr,
    pub summary: DevPtr,
    pub pool_stride: i64,
    pub clim_stride: i64,
    pub n_events: i64,
    pub n_cells: i64,
    pub n_days: i64,
    pub n_doy: i64,
    pub n_years: i64,
    pub min_duration: i64,
    /// Negative: events are never joined.
    pub max_gap: i64,
    pub cold: i64,
    /// 0: count each cell's events; 1: measure and store them, and the summaries.
    pub pass: i64,
}

/// Threads a block of the kernel (`SC_EV_BLOCK`).
pub const BLOCK: u32 = 256;

/// Per-year statistics the kernel keeps (`SC_EV_STATS`, [`crate::events::summary::STATS`]).
pub const N_STATS: usize = 19;

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's constants and field list agree with these (read from its text: a field
    /// added on one side only would shift every field after it).
    #[test]
    fn the_block_is_the_kernels() {
        let text = crate::engine::gpu::source::EVENTS_SOURCE;
        assert!(text.contains(&format!("#define SC_EV_BLOCK {BLOCK}\n")));
        assert!(text.contains(&format!("#define SC_EV_STATS {N_STATS}\n")));
        assert_eq!(N_STATS, crate::events::summary::STATS.len());
        let body = text.split("struct EventParams {").nth(1).unwrap().split("};").next().unwrap();
        let mut names = Vec::new();
        for line in body.lines() {
            let code = line.split("//").next().unwrap().trim().trim_end_matches(';');
            if code.is_empty() {
                continue;
            }
            for part in code.split(',') {
                let name = part.trim().rsplit([' ', '*']).next().unwrap();
                names.push(name.to_string());
            }
        }
        let rust = [
            "pool", "table", "slot_of_day", "doy", "year", "mean", "thresh", "counts", "offsets", "ints", "floats",
            "category", "acc", "summary", "pool_stride", "clim_stride", "n_events", "n_cells", "n_days", "n_doy",
            "n_years", "min_duration", "max_gap", "cold", "pass",
        ];
        assert_eq!(names, rust);
        assert_eq!(std::mem::size_of::<EventParams>(), 8 * rust.len());
    }
}
