//! Values the pool's type could not hold, refused before a segment is computed (never taken
//! for missing ones): a finite value beyond float32's range in a float32 pool (`--pool f32`,
//! or the default on a GPU engine for float input), which rounds to infinity, and a value
//! outside a lossy int16 packing's range (`--pack-scale`), stored as its mark. A host pool's
//! rows are looked at here, each once; a device-resident pool's rows by the readers that
//! fill them (they are not kept on the host: [`super::stage::Staging`]). The error names the
//! file, the variable and the value, found by reading the file's field again in float64.

use rayon::prelude::*;

use super::context::TileCtx;
use super::readers::Rows;
use super::segments::Segment;
use crate::error::Error;
use crate::pool::{any_unheld, Sample};

/// Refuse segment `seg` where one of its slots not `checked` yet holds a value the pool could
/// not hold; marks its slots checked.
pub(super) fn check_segment<T: Sample>(
    ctx: &TileCtx<'_>,
    rows: &Rows<'_, T>,
    seg: &Segment,
    checked: &mut [bool],
) -> Result<(), Error> {
    if !T::may_not_hold(ctx.plan.pack.is_some()) {
        return Ok(());
    }
    let todo: Vec<usize> = seg.slots.clone().filter(|&s| !checked[s]).collect();
    let bad = match rows.stage() {
        Some(stage) => stage.unheld_among(&todo),
        None => ctx.threads.install(|| {
            todo.par_iter().copied().find_first(|&s| {
                // SAFETY: every slot of the segment has been reported finished by its reader.
                any_unheld(unsafe { rows.view(s..s + 1, None) }.as_slice())
            })
        }),
    };
    for s in todo {
        checked[s] = true;
    }
    bad.map_or(Ok(()), |slot| Err(unheld_error(ctx, slot)))
}

/// The error for pool slot `slot`, which holds a value the pool could not hold.
fn unheld_error(ctx: &TileCtx<'_>, slot: usize) -> Error {
    let (path, var) = (ctx.job.files[slot].clone(), ctx.job.layout.name.clone());
    match ctx.plan.pack {
        Some(q) => {
            let value = first_value(ctx, slot, |v| !crate::pool::Quantize::out_of_range(q.encode(v)));
            let (lo, hi) = q.range();
            Error::PackRange { path, var, value, lo, hi }
        }
        None => {
            let value = first_value(ctx, slot, |v| (v as f32).is_finite());
            let pool = match ctx.plan.pool {
                Some(_) => "--pool f32",
                None => "the float32 pool a GPU engine takes for float input by default",
            };
            Error::PoolRange { path, var, value, pool, remedy: "pass --pool f64" }
        }
    }
}

/// The first value of slot `slot`'s field (decoded in float64, read again through libnetcdf)
/// that `held` refuses, as the message shows it; "a value" where it cannot be read again.
fn first_value(ctx: &TileCtx<'_>, slot: usize, held: impl Fn(f64) -> bool) -> String {
    let (path, step, job) = (&ctx.job.files[slot], ctx.job.steps[slot], ctx.job);
    let read = || crate::input::read_checked_at(path, &job.layout, &job.first, None, ctx.region, step);
    // a file the direct path read was never opened by the library here: a child reads it first
    // (a damaged header can crash libnetcdf, see `input::contain`)
    if crate::input::contain::survives(path, "reading the variable", || drop(read())).is_err() {
        return "a value".into();
    }
    let Ok((layout, raw)) = read() else { return "a value".into() };
    let mut values = vec![0.0f64; ctx.region.n_cells()];
    crate::input::decode_region(&layout, ctx.region, &raw, &mut values);
    values.into_iter().find(|&v| !v.is_nan() && !held(v)).map_or_else(|| "a value".into(), show)
}

/// `v` as written in the message: plain where that is short, else in exponent form (1e39).
fn show(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 12 {
        plain
    } else {
        format!("{v:e}")
    }
}
