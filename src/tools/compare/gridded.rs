//! Gridded files (`run`'s outputs, `events`' summary.nc): each gridded variable read through
//! the inputs' decoding (so dimension order and packing do not matter) and compared cell by
//! cell, one row of the table each; every other variable (coordinates, bounds, days of year)
//! value by value as stored, any difference beyond the tolerance being a difference of the
//! pair.

use std::path::Path;

use super::{beyond, values, CompareError, Comparison, VarDiff};
use crate::input::{read_canonical, VarLayout};

/// Gridded variables of an open file, with their layouts.
pub(super) fn variables(file: &netcdf::File, path: &Path) -> Vec<VarLayout> {
    file.variables()
        .filter_map(|v| VarLayout::inspect(file, path, Some(&v.name()), true).ok())
        .filter(|l| !l.dims.iter().any(|(d, _)| *d == l.name))
        .collect()
}

/// Compare file `name` of both sides, whose variables are `vars` on both.
pub(super) fn compare(
    name: &str,
    (fa, a): (&netcdf::File, &Path),
    (fb, b): (&netcdf::File, &Path),
    vars: &[String],
    tolerance: f64,
    out: &mut Comparison,
) -> Result<(), CompareError> {
    let (va, vb) = (variables(fa, a), variables(fb, b));
    for var in vars {
        match (va.iter().find(|l| &l.name == var), vb.iter().find(|l| &l.name == var)) {
            (Some(la), Some(lb)) => {
                if (la.nlat(), la.nlon(), la.extra_len()) != (lb.nlat(), lb.nlon(), lb.extra_len()) {
                    out.problems.push(format!("{name}: variable {var}: {} vs {}", la.shape_text(), lb.shape_text()));
                    continue;
                }
                let (xa, xb) = (read_canonical(fa, a, la)?, read_canonical(fb, b, lb)?);
                out.rows.push(VarDiff::of(name, var, &xa, &xb, tolerance));
            }
            (None, None) => {
                let (xa, xb) = (values(fa, a, var)?, values(fb, b, var)?);
                if xa.len() != xb.len() {
                    out.problems.push(format!("{name}: variable {var}: {} vs {} values", xa.len(), xb.len()));
                } else if let Some(i) = (0..xa.len()).find(|&i| beyond(xa[i], xb[i], tolerance)) {
                    out.problems
                        .push(format!("{name}: variable {var} differs first at index {i}: {} vs {}", xa[i], xb[i]));
                }
            }
            (Some(_), None) => return Err(not_gridded(b, var, a)),
            (None, Some(_)) => return Err(not_gridded(a, var, b)),
        }
    }
    Ok(())
}

fn not_gridded(path: &Path, var: &str, other: &Path) -> CompareError {
    CompareError::Cannot {
        path: path.into(),
        problem: format!("variable '{var}' is not gridded, but it is in {}", other.display()),
    }
}
