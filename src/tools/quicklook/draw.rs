//! Drawing a [`Field`] with `plotters` into an RGB buffer (the bitmap backend without its
//! image encoder, so no image crate) and writing it as PNG with the `png` crate.

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

use super::{Field, FONT};

/// The "turbo" colour map (Mikhailov 2019), polynomial approximation; `t` in [0, 1].
pub fn turbo(t: f64) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    let poly = |c: [f64; 6]| c[0] + t * (c[1] + t * (c[2] + t * (c[3] + t * (c[4] + t * c[5]))));
    let r = poly([0.135_721_38, 4.615_392_6, -42.660_322, 132.131_08, -152.942_4, 59.286_38]);
    let g = poly([0.091_402_61, 2.194_188_4, 4.842_966_6, -14.185_033, 4.277_298_6, 2.829_566]);
    let b = poly([0.106_673_3, 12.641_946, -60.582_05, 110.362_77, -89.903_11, 27.348_25]);
    let q = |x: f64| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    [q(r), q(g), q(b)]
}

/// Cells never valid (land, permanent ice).
pub const LAND: RGBColor = RGBColor(150, 150, 150);
/// Cells without a value on this day only.
pub const MISSING: RGBColor = RGBColor(255, 255, 255);

/// Register the embedded font as plotters' sans-serif (once per process).
fn register_font() -> Result<(), String> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| "the embedded font does not load".to_string());
    });
    result
}

/// The width of the map in pixels, and the image's size, for a grid spanning `dlon` x `dlat`
/// degrees: about 900 pixels of map, its height by the grid's aspect (within reason).
fn image_size(dlon: f64, dlat: f64) -> (u32, u32, u32) {
    let map_w = 900u32;
    let aspect = if dlon > 0.0 && dlat > 0.0 { (dlat / dlon).clamp(0.25, 1.5) } else { 0.5 };
    let map_h = (f64::from(map_w) * aspect).round() as u32;
    // title 56, axes 60 below, margins; colour bar and its labels 150 to the right
    (map_w, map_w + 70 + 170, map_h + 56 + 60 + 20)
}

/// Draw `field` as a map PNG at `path`.
pub fn draw_map(path: &Path, field: &Field) -> Result<(), String> {
    register_font()?;
    let (nlat, nlon) = (field.lat.len(), field.lon.len());
    if nlat == 0 || nlon == 0 || field.values.len() != nlat * nlon {
        return Err(format!("{} values for a {nlat} x {nlon} grid", field.values.len()));
    }
    // cell edges: half a step beyond the first and last centres
    let edges = |c: &[f64]| -> (f64, f64, f64) {
        let step = if c.len() > 1 { (c[c.len() - 1] - c[0]) / (c.len() - 1) as f64 } else { 1.0 };
        let (a, b) = (c[0] - step / 2.0, c[c.len() - 1] + step / 2.0);
        (a.min(b), a.max(b), step)
    };
    let (lon0, lon1, dlon) = edges(&field.lon);
    let (lat0, lat1, dlat) = edges(&field.lat);
    let (lo, hi) = field
        .values
        .iter()
        .filter(|v| !v.is_nan())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let (lo, hi) = if lo < hi {
        (lo, hi)
    } else if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        (0.0, 1.0)
    };
    let (map_w, width, height) = image_size(lon1 - lon0, lat1 - lat0);
    let mut rgb = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let (head, body) = root.split_vertically(56);
        head.draw_text(&field.title, &("sans-serif", 20).into_font().color(&BLACK), (12, 6)).map_err(e)?;
        head.draw_text(&field.subtitle, &("sans-serif", 15).into_font().color(&RGBColor(60, 60, 60)), (12, 32))
            .map_err(e)?;
        let (map_area, bar_area) = body.split_horizontally(map_w + 70);
        let mut chart = ChartBuilder::on(&map_area)
            .margin(8)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d(lon0..lon1, lat0..lat1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(match &field.index_axes {
                Some((_, col)) => format!("grid index {col}"),
                None => "longitude (degrees east)".into(),
            })
            .y_desc(match &field.index_axes {
                Some((row, _)) => format!("grid index {row}"),
                None => "latitude (degrees north)".into(),
            })
            .x_labels(9)
            .y_labels(7)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .draw()
            .map_err(e)?;
        // a block of cells per pixel or more: at most about one rectangle per map pixel
        let stride = (nlon / map_w as usize).max(1);
        let colour = |i: usize| -> RGBColor {
            let v = field.values[i];
            if v.is_nan() {
                if field.never_valid[i] {
                    LAND
                } else {
                    MISSING
                }
            } else {
                let [r, g, b] = turbo((v - lo) / (hi - lo));
                RGBColor(r, g, b)
            }
        };
        let cells = (0..nlat).step_by(stride).flat_map(|j| (0..nlon).step_by(stride).map(move |i| (j, i)));
        chart
            .draw_series(cells.map(|(j, i)| {
                // a block spans its first and last cells' centres and half a step beyond
                let span = |c: &[f64], k: usize, step: f64| {
                    let (a, b) = (c[k], c[(k + stride - 1).min(c.len() - 1)]);
                    (a.min(b) - step.abs() / 2.0, a.max(b) + step.abs() / 2.0)
                };
                let ((x0, x1), (y0, y1)) = (span(&field.lon, i, dlon), span(&field.lat, j, dlat));
                Rectangle::new([(x0, y0), (x1, y1)], colour(j * nlon + i).filled())
            }))
            .map_err(e)?;
        draw_scale(&bar_area, body.dim_in_pixel().1, field, (lo, hi))?;
        root.present().map_err(e)?;
    }
    write_png(path, &rgb, width, height).map_err(|e| e.to_string())
}

/// The colour bar right of the map: the scale from `lo` to `hi` with the units, and under it
/// what the colours outside the scale mean. `body_height` is the height below the title.
fn draw_scale(
    bar_area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    body_height: u32,
    field: &Field,
    (lo, hi): (f64, f64),
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let (bar, legend) = bar_area.split_vertically(body_height - 110);
    let mut scale = ChartBuilder::on(&bar)
        .margin_top(16)
        .margin_bottom(12)
        .margin_right(70)
        .y_label_area_size(0)
        .right_y_label_area_size(60)
        .build_cartesian_2d(0.0..1.0, lo..hi)
        .map_err(e)?;
    scale
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(8)
        .y_desc(if field.units.is_empty() { "value" } else { &field.units })
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(e)?;
    let steps = 200;
    scale
        .draw_series((0..steps).map(|k| {
            let (a, b) = (lo + (hi - lo) * k as f64 / steps as f64, lo + (hi - lo) * (k + 1) as f64 / steps as f64);
            let [r, g, bl] = turbo((k as f64 + 0.5) / steps as f64);
            Rectangle::new([(0.0, a), (1.0, b)], RGBColor(r, g, bl).filled())
        }))
        .map_err(e)?;
    // what the colours outside the scale mean
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    // (a map of no particular day, such as an events summary over years, has no missing day)
    let keys: &[(RGBColor, &str)] = if field.day.is_some() {
        &[(LAND, "never valid (land)"), (MISSING, "no value on this day")]
    } else {
        &[(LAND, "never valid (land)")]
    };
    for (k, (fill, text)) in keys.iter().enumerate() {
        let y = 14 + 24 * k as i32;
        legend.draw(&Rectangle::new([(6, y), (22, y + 14)], fill.filled())).map_err(e)?;
        legend.draw(&Rectangle::new([(6, y), (22, y + 14)], BLACK.stroke_width(1))).map_err(e)?;
        legend.draw_text(text, &font, (28, y)).map_err(e)?;
    }
    Ok(())
}

/// Encode an RGB buffer as PNG.
fn write_png(path: &Path, rgb: &[u8], width: u32, height: u32) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(std::io::Error::other)?;
    w.write_image_data(rgb).map_err(std::io::Error::other)?;
    w.finish().map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(nlat: usize, nlon: usize) -> Field {
        let lat: Vec<f64> = (0..nlat).map(|j| -90.0 + 180.0 * (j as f64 + 0.5) / nlat as f64).collect();
        let lon: Vec<f64> = (0..nlon).map(|i| 360.0 * (i as f64 + 0.5) / nlon as f64).collect();
        let values: Vec<f64> =
            (0..nlat * nlon).map(|k| if k % 7 == 3 { f64::NAN } else { (k % nlon) as f64 / 3.0 }).collect();
        let never_valid = (0..nlat * nlon).map(|k| k % 14 == 3).collect();
        Field {
            values,
            never_valid,
            lat,
            lon,
            stat: "p90".into(),
            day: Some(197),
            title: "p90, day 197: climatological 90th percentile".into(),
            subtitle: "years 1991-2020".into(),
            units: "degree_Celsius".into(),
            index_axes: None,
        }
    }

    /// The PNG decodes at the size planned, holds the colour scale's ends, land grey, the
    /// missing white and dark text, and is nowhere near uniform.
    #[test]
    fn map_png_has_scale_land_missing_and_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.png");
        draw_map(&path, &field(36, 72)).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let (w, h) = (reader.info().width, reader.info().height);
        let (_, width, height) = image_size(360.0, 180.0);
        assert_eq!((w, h), (width, height));
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut buf).unwrap();
        let pixels: Vec<[u8; 3]> = buf.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
        let has = |c: [u8; 3]| pixels.contains(&c);
        assert!(has(turbo(0.0)) || has(turbo(0.0025)), "low end of the scale");
        assert!(has([150, 150, 150]), "land");
        assert!(pixels.iter().filter(|p| p[0] < 40 && p[1] < 40 && p[2] < 40).count() > 500, "text and axes");
        let distinct: std::collections::HashSet<_> = pixels.iter().collect();
        assert!(distinct.len() > 100, "{} colours", distinct.len());
    }
}
