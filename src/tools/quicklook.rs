//! Quicklook PNG maps of one output field: a colour map (north up), a colour bar, and the
//! value range written with a tiny built-in digit font. Fill cells are grey.

use std::path::Path;

/// 3x5 glyphs for the characters value labels need.
fn glyph(c: char) -> [u8; 5] {
    match c {
        '0' => [0b111, 0b101, 0b101, 0b101, 0b111],
        '1' => [0b010, 0b110, 0b010, 0b010, 0b111],
        '2' => [0b111, 0b001, 0b111, 0b100, 0b111],
        '3' => [0b111, 0b001, 0b111, 0b001, 0b111],
        '4' => [0b101, 0b101, 0b111, 0b001, 0b001],
        '5' => [0b111, 0b100, 0b111, 0b001, 0b111],
        '6' => [0b111, 0b100, 0b111, 0b101, 0b111],
        '7' => [0b111, 0b001, 0b010, 0b010, 0b010],
        '8' => [0b111, 0b101, 0b111, 0b101, 0b111],
        '9' => [0b111, 0b101, 0b111, 0b001, 0b111],
        '-' => [0b000, 0b000, 0b111, 0b000, 0b000],
        '.' => [0b000, 0b000, 0b000, 0b000, 0b010],
        _ => [0; 5],
    }
}

/// The "turbo" colour map (Mikhailov 2019), polynomial approximation; `t` in [0, 1].
fn turbo(t: f64) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    let poly = |c: [f64; 6]| c[0] + t * (c[1] + t * (c[2] + t * (c[3] + t * (c[4] + t * c[5]))));
    let r = poly([0.135_721_38, 4.615_392_6, -42.660_322, 132.131_08, -152.942_4, 59.286_38]);
    let g = poly([0.091_402_61, 2.194_188_4, 4.842_966_6, -14.185_033, 4.277_298_6, 2.829_566]);
    let b = poly([0.106_673_3, 12.641_946, -60.582_05, 110.362_77, -89.903_11, 27.348_25]);
    let q = |x: f64| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    [q(r), q(g), q(b)]
}

/// An RGB canvas.
struct Canvas {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Canvas {
    fn new(width: usize, height: usize) -> Canvas {
        Canvas { width, height, rgb: vec![255; width * height * 3] }
    }

    fn set(&mut self, x: usize, y: usize, c: [u8; 3]) {
        if x < self.width && y < self.height {
            let at = (y * self.width + x) * 3;
            self.rgb[at..at + 3].copy_from_slice(&c);
        }
    }

    fn text(&mut self, x: usize, y: usize, s: &str, scale: usize) {
        for (k, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..3 {
                    if bits >> (2 - col) & 1 == 1 {
                        for dy in 0..scale {
                            for dx in 0..scale {
                                self.set(x + (k * 4 + col) * scale + dx, y + row * scale + dy, [0, 0, 0]);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Draw `values` (`(lat, lon)` order, NaN = fill) as a map PNG at `path`.
/// `lat_ascending` says whether row 0 is the southernmost. Returns the (min, max) drawn.
pub fn write_map(
    path: &Path,
    values: &[f64],
    nlat: usize,
    nlon: usize,
    lat_ascending: bool,
) -> std::io::Result<(f64, f64)> {
    let (lo, hi) = values
        .iter()
        .filter(|v| !v.is_nan())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (0.0, 1.0) };
    let scale = (720 / nlon.max(1)).max(1);
    let (map_w, map_h) = (nlon * scale, nlat * scale);
    let font = 2;
    let mut c = Canvas::new(map_w.max(200), map_h + 40);
    for y in 0..map_h {
        let row = y / scale;
        let j = if lat_ascending { nlat - 1 - row } else { row };
        for x in 0..map_w {
            let v = values[j * nlon + x / scale];
            let colour = if v.is_nan() { [170, 170, 170] } else { turbo((v - lo) / (hi - lo).max(1e-12)) };
            c.set(x, y, colour);
        }
    }
    let bar_y = map_h + 6;
    for x in 0..map_w {
        for y in bar_y..bar_y + 12 {
            c.set(x, y, turbo(x as f64 / (map_w.max(2) - 1) as f64));
        }
    }
    let (lo_s, hi_s) = (format!("{lo:.2}"), format!("{hi:.2}"));
    c.text(0, bar_y + 16, &lo_s, font);
    c.text(map_w.saturating_sub(hi_s.len() * 4 * font), bar_y + 16, &hi_s, font);
    let file = std::fs::File::create(path)?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), c.width as u32, c.height as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(std::io::Error::other)?;
    w.write_image_data(&c.rgb).map_err(std::io::Error::other)?;
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_png_round_trips_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.png");
        let values: Vec<f64> = (0..6 * 10).map(|i| if i == 3 { f64::NAN } else { i as f64 }).collect();
        let (lo, hi) = write_map(&path, &values, 6, 10, true).unwrap();
        assert_eq!((lo, hi), (0.0, 59.0));
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let reader = decoder.read_info().unwrap();
        assert_eq!(reader.info().width, 720);
        assert_eq!(reader.info().height, 6 * 72 + 40);
        assert_eq!(turbo(0.0), [35, 23, 27]);
    }
}
