//! Stacked and climatology outputs across ranks: each rank writes its slice of the target days
//! as a stacked file (or one climatology file) in its staging directory, and rank 0 joins the
//! slices along `time` (`doy` for the climatology), in rank order, into the final file.
//! Variables without that dimension (lat, lon) and global attributes
//! come from the first slice; the data variable keeps the compression the job asked for.
//! HDF5 is not written in parallel here, so this needs the staging directories on a file
//! system rank 0 can read (the output directory on a shared file system, as on Lustre).

use std::path::{Path, PathBuf};

use netcdf::types::{FloatType, IntType, NcVariableType};
use netcdf::Extent;

use crate::output::OutputError;

fn fail(path: &Path, var: &str) -> impl Fn(netcdf::Error) -> OutputError {
    let (path, var) = (path.to_path_buf(), var.to_string());
    move |cause| OutputError::write(&path, &var, cause)
}

/// Join `parts` (same variables, consecutive slices of `time`) into `out`.
pub fn concat_time(parts: &[PathBuf], out: &Path, deflate: Option<u8>) -> Result<(), OutputError> {
    concat_along(parts, out, "time", deflate)
}

/// Join `parts` (same variables, consecutive slices of dimension `along`) into `out`.
pub fn concat_along(parts: &[PathBuf], out: &Path, along: &str, deflate: Option<u8>) -> Result<(), OutputError> {
    let sources: Vec<netcdf::File> =
        parts.iter().map(|p| netcdf::open(p).map_err(fail(p, ""))).collect::<Result<_, _>>()?;
    let first = &sources[0];
    let lengths: Vec<usize> = sources.iter().map(|f| f.dimension_len(along).unwrap_or(0)).collect();
    let mut dst = netcdf::create(out).map_err(fail(out, ""))?;
    let raw = define_joined(&mut dst, first, &parts[0], out, along, lengths.iter().sum(), deflate)?;
    for v in first.variables().filter(|v| !raw.contains(&v.name())) {
        let name = v.name();
        let along_time = v.dimensions().first().is_some_and(|d| d.name() == along);
        let copies: Vec<(usize, &netcdf::File, &PathBuf)> = if along_time {
            let mut at = 0;
            sources
                .iter()
                .zip(parts)
                .zip(&lengths)
                .map(|((f, p), &l)| {
                    at += l;
                    (at - l, f, p)
                })
                .collect()
        } else {
            vec![(0, first, &parts[0])]
        };
        for (start, src, path) in copies {
            let sv = src.variable(&name).ok_or(netcdf::Error::NotFound(name.clone())).map_err(fail(path, &name))?;
            let mut extents: Vec<Extent> =
                sv.dimensions().iter().map(|d| Extent::SliceCount { start: 0, count: d.len(), stride: 1 }).collect();
            if along_time {
                extents[0] = Extent::SliceCount { start, count: sv.dimensions()[0].len(), stride: 1 };
            }
            let mut dv =
                dst.variable_mut(&name).ok_or(netcdf::Error::NotFound(name.clone())).map_err(fail(out, &name))?;
            copy_values(&sv, path, &mut dv, out, extents)?;
        }
    }
    dst.close().map_err(fail(out, ""))?;
    drop(sources);
    for name in &raw {
        let mut at = 0;
        for (p, &l) in parts.iter().zip(&lengths) {
            crate::nc::chunked::copy_chunks(p, out, name, at)
                .map_err(|why| fail(out, name)(netcdf::Error::Str(why)))?;
            at += l;
        }
    }
    Ok(())
}

/// Define `dst` after the first slice `first` (read from `first_path`): its dimensions (`along`
/// `total` long), global attributes and variables with their attributes. Returns the compressed
/// data variables, which are copied chunk by chunk once the file is closed.
fn define_joined(
    dst: &mut netcdf::FileMut,
    first: &netcdf::File,
    first_path: &Path,
    out: &Path,
    along: &str,
    total: usize,
    deflate: Option<u8>,
) -> Result<Vec<String>, OutputError> {
    for d in first.dimensions() {
        let name = d.name();
        dst.add_dimension(&name, if name == along { total } else { d.len() }).map_err(fail(out, &name))?;
    }
    for a in first.attributes() {
        let value = a.value().map_err(fail(first_path, a.name()))?;
        dst.add_attribute(a.name(), value).map_err(fail(out, a.name()))?;
    }
    let mut raw: Vec<String> = Vec::new();
    for v in first.variables() {
        let name = v.name();
        let dims: Vec<String> = v.dimensions().iter().map(|d| d.name()).collect();
        let dim_refs: Vec<&str> = dims.iter().map(String::as_str).collect();
        let lens: Vec<usize> = v.dimensions().iter().map(|d| d.len()).collect();
        let mut w = dst.add_variable_with_type(&name, &dim_refs, &v.vartype()).map_err(fail(out, &name))?;
        if let (Some(level), 3) = (deflate, dims.len()) {
            // the slices' chunks and filters, so that their chunks are copied as stored
            let chunks = v.chunking().map_err(fail(first_path, &name))?.unwrap_or(vec![1, lens[1], lens[2]]);
            let shuffle = crate::nc::chunked::shuffled(first_path, &name).unwrap_or(true);
            w.set_chunking(&chunks).map_err(fail(out, &name))?;
            w.set_compression(i32::from(level), shuffle).map_err(fail(out, &name))?;
            // SAFETY: every chunk is copied in below before the file is published.
            unsafe { w.set_nofill() }.map_err(fail(out, &name))?;
            raw.push(name.clone());
        }
        for a in v.attributes() {
            let value = a.value().map_err(fail(first_path, &name))?;
            match (a.name(), value) {
                ("_FillValue", netcdf::AttributeValue::Double(x)) => w.set_fill_value(x),
                (attr, value) => w.put_attribute(attr, value).map(|_| ()),
            }
            .map_err(fail(out, &name))?;
        }
    }
    Ok(raw)
}

/// Copy all values of `sv` (in the slice at `path`) into `dv` at `extents`, in their stored type.
fn copy_values(
    sv: &netcdf::Variable,
    path: &Path,
    dv: &mut netcdf::VariableMut,
    out: &Path,
    extents: Vec<Extent>,
) -> Result<(), OutputError> {
    let name = sv.name();
    match sv.vartype() {
        NcVariableType::Float(FloatType::F64) => {
            let values: Vec<f64> = sv.get_values(..).map_err(fail(path, &name))?;
            dv.put_values(&values, extents).map_err(fail(out, &name))?;
        }
        NcVariableType::Float(FloatType::F32) => {
            let values: Vec<f32> = sv.get_values(..).map_err(fail(path, &name))?;
            dv.put_values(&values, extents).map_err(fail(out, &name))?;
        }
        NcVariableType::Int(IntType::I16) => {
            let values: Vec<i16> = sv.get_values(..).map_err(fail(path, &name))?;
            dv.put_values(&values, extents).map_err(fail(out, &name))?;
        }
        NcVariableType::Int(IntType::I32) => {
            let values: Vec<i32> = sv.get_values(..).map_err(fail(path, &name))?;
            dv.put_values(&values, extents).map_err(fail(out, &name))?;
        }
        other => {
            let e = netcdf::Error::Str(format!("cannot join variables of type {other:?}"));
            return Err(fail(path, &name)(e));
        }
    }
    Ok(())
}

/// Set the `missing_input_files` global attribute of `path` to the whole job's count (each
/// rank only knows the files its own slice missed).
pub fn set_missing_count(path: &Path, count: usize) -> Result<(), OutputError> {
    let mut f = netcdf::append(path).map_err(fail(path, "missing_input_files"))?;
    f.add_attribute("missing_input_files", count as i32).map_err(fail(path, "missing_input_files"))?;
    f.close().map_err(fail(path, "missing_input_files"))
}
