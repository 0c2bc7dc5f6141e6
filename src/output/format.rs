//! How a job's statistics are stored and named: the flags that shape the stored values
//! ([`OutputFormat`]: type, packing, chunks, shuffle, units), the unit conversion they imply
//! for the input's units, and the statistic variables' names ([`names`]).

use super::{OutputError, OutputMeta, OutputSpec};
use crate::nc::encode::{ChunkShape, Encoding, OutputType};
use crate::stats::StatSpec;

/// How values are stored (`--output-type`, `--output-scale`, `--output-offset`, `--shuffle`,
/// `--chunks`, `--units`).
#[derive(Clone, Debug, PartialEq)]
pub struct OutputFormat {
    pub ty: OutputType,
    /// int16 packing: value = offset + scale x stored.
    pub scale: f64,
    pub offset: f64,
    /// The shuffle filter before deflate.
    pub shuffle: bool,
    /// Chunk shape of compressed outputs (`None`: [`crate::nc::encode::chunk_shape`]'s).
    pub chunks: Option<ChunkShape>,
    /// Convert the statistics to these units (`degC`: kelvin input to degrees Celsius).
    pub units: Option<TargetUnits>,
}

impl Default for OutputFormat {
    fn default() -> OutputFormat {
        OutputFormat { ty: OutputType::F64, scale: 1.0, offset: 0.0, shuffle: true, chunks: None, units: None }
    }
}

/// Units the statistics can be converted to (`--units`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum TargetUnits {
    /// Degrees Celsius: kelvin input minus 273.15 (input already in Celsius is kept).
    #[value(name = "degC")]
    DegC,
}

/// Whether `units` (a CF/UDUNITS string) is kelvin, Celsius, or something else.
fn temperature_scale(units: &str) -> Option<TargetUnits> {
    let u = units.trim().to_ascii_lowercase().replace(' ', "_");
    match u.as_str() {
        "degc" | "deg_c" | "celsius" | "degree_c" | "degrees_c" | "degree_celsius" | "degrees_celsius" | "°c" => {
            Some(TargetUnits::DegC)
        }
        _ => None,
    }
}

fn is_kelvin(units: &str) -> bool {
    let u = units.trim().to_ascii_lowercase().replace(' ', "_");
    matches!(u.as_str(), "k" | "kelvin" | "kelvins" | "degk" | "deg_k" | "degree_k" | "degrees_k" | "degree_kelvin")
}

impl OutputSpec {
    /// What is added to every value for `--units`, or why the input's units cannot be converted.
    pub fn unit_shift(&self, meta: &OutputMeta) -> Result<f64, OutputError> {
        let Some(target) = self.format.units else { return Ok(0.0) };
        let units = meta.var_meta.units.as_deref().unwrap_or("");
        match target {
            TargetUnits::DegC if is_kelvin(units) => Ok(-273.15),
            TargetUnits::DegC if temperature_scale(units) == Some(TargetUnits::DegC) => Ok(0.0),
            TargetUnits::DegC => Err(OutputError::Units {
                var: meta.input_var.clone(),
                units: if units.is_empty() { "no units attribute".into() } else { format!("units '{units}'") },
            }),
        }
    }

    /// The `units` attribute of the statistics: the input's, or degrees Celsius after a
    /// conversion.
    pub fn output_units(&self, meta: &OutputMeta) -> Option<String> {
        match (self.format.units, &meta.var_meta.units) {
            (Some(TargetUnits::DegC), Some(u)) if is_kelvin(u) => Some("degree_Celsius".into()),
            (_, u) => u.clone(),
        }
    }

    /// How values are stored ([`OutputSpec::unit_shift`] already checked: a failure there
    /// stores unconverted values).
    pub fn encoding(&self, meta: &OutputMeta) -> Encoding {
        Encoding {
            ty: self.format.ty,
            scale: self.format.scale,
            offset: self.format.offset,
            shift: self.unit_shift(meta).unwrap_or(0.0),
            fill: self.fill_value,
        }
    }
}

/// The names of a job's statistic variables in its output files, in the order of
/// [`StatSpec::names`]: `{input_var}_{stat}` (`sst_mean`, `sst_p90`, `analysed_sst_p97_5`), so
/// that none collides with a method of xarray's `Dataset` (`mean`). File names keep the
/// statistic alone (`mean_doy152.nc`).
pub fn names(input_var: &str, stats: &StatSpec) -> Vec<String> {
    stats.names().iter().map(|s| format!("{input_var}_{s}")).collect()
}
