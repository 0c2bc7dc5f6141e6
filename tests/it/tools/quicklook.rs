//! Quicklook maps: `run --quicklook D` and `sstclim quicklook FILE` draw PNGs of the expected
//! size that are maps (many colours, land grey), on per-day and stacked outputs, and on files
//! whose statistics are named `{var}_{stat}` as well as `mean`/`p90`.

use std::path::Path;

use crate::common::*;

/// Width, height and pixels of a PNG.
fn decode(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = buf[..info.buffer_size()].chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
    (info.width, info.height, px)
}

/// A map: the planned width, many colours, land grey, text and axes dark.
fn assert_map(path: &Path) {
    let (w, h, px) = decode(path);
    assert_eq!(w, 1140, "{}", path.display());
    assert!((300..=1200).contains(&h), "{h}");
    let distinct: std::collections::HashSet<_> = px.iter().collect();
    assert!(distinct.len() > 100, "{} colours in {}", distinct.len(), path.display());
    assert!(px.iter().filter(|p| **p == [150, 150, 150]).count() > 100, "land in {}", path.display());
    assert!(px.iter().filter(|p| p.iter().all(|&c| c < 40)).count() > 300, "text in {}", path.display());
}

#[test]
fn run_draws_quicklooks_of_every_statistic() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "36x19", "--years", "2001-2002", "--doys", "100-110", "--land-fraction", "0.3"]);
    for layout in ["per-doy", "stacked"] {
        let out = dir.path().join(layout);
        let args = with(
            run_args(&data, &out, "2001-2002", "102-108"),
            &["--half-window", "2", "--percentile", "10,90", "--layout", layout, "--quicklook", "105"],
        );
        let text = String::from_utf8(ok(&args).stdout).unwrap();
        for stat in ["mean", "p10", "p90"] {
            let png = out.join(format!("quicklook_{stat}_doy105.png"));
            assert!(text.contains(&png.display().to_string()), "{text}");
            assert_map(&png);
        }
    }
    // a day the job does not compute is refused before anything runs
    let out = dir.path().join("bad");
    let err = fails(&with(run_args(&data, &out, "2001-2002", "102-108"), &["--quicklook", "120"]));
    assert!(err.contains("--quicklook 120: not a target day of this job (--doys 102-108)"), "{err}");
}

/// A stacked file with `{var}_{stat}` names, written here: the statistic is found by suffix
/// or by its `percentile` attribute, the day by `doy`.
#[test]
fn quicklook_finds_statistics_by_suffix_or_attribute() {
    let dir = tmp();
    let file = dir.path().join("climatology.nc");
    {
        let mut nc = netcdf::create(&file).unwrap();
        let (nt, nlat, nlon) = (2, 18, 36);
        nc.add_dimension("doy", nt).unwrap();
        nc.add_dimension("lat", nlat).unwrap();
        nc.add_dimension("lon", nlon).unwrap();
        nc.add_variable::<i32>("doy", &["doy"]).unwrap().put_values(&[200, 201], ..).unwrap();
        let lat: Vec<f64> = (0..nlat).map(|j| -85.0 + 10.0 * j as f64).collect();
        let lon: Vec<f64> = (0..nlon).map(|i| 5.0 + 10.0 * i as f64).collect();
        nc.add_variable::<f64>("lat", &["lat"]).unwrap().put_values(&lat, ..).unwrap();
        nc.add_variable::<f64>("lon", &["lon"]).unwrap().put_values(&lon, ..).unwrap();
        let fill = 9.969_209_968_386_869e36;
        for (name, offset, pct) in [("sst_mean", 0.0, None), ("sst_p90", 1.5, Some(90.0))] {
            let values: Vec<f64> = (0..nt * nlat * nlon)
                .map(|k| {
                    let (j, i) = ((k / nlon) % nlat, k % nlon);
                    // a continent every day, a gap on the second day only
                    if (10..20).contains(&i) && (5..12).contains(&j) || (k >= nlat * nlon && i == 30 && j == 3) {
                        fill
                    } else {
                        30.0 - (lat[j].abs() / 3.0) + offset + (i as f64) / 20.0
                    }
                })
                .collect();
            let mut v = nc.add_variable::<f64>(name, &["doy", "lat", "lon"]).unwrap();
            v.put_attribute("_FillValue", fill).unwrap();
            v.put_attribute("units", "degree_Celsius").unwrap();
            if let Some(p) = pct {
                v.put_attribute("percentile", p).unwrap();
            }
            v.put_values(&values, ..).unwrap();
        }
        nc.add_attribute("climatology_years", "1983-2012").unwrap();
    }
    for (stat, day) in [("p90", "201"), ("mean", "200"), ("sst_p90", "200")] {
        let png = dir.path().join(format!("{stat}-{day}.png"));
        ok(&["quicklook", &s(&file), "--stat", stat, "--day", day, "--output", &s(&png)]);
        assert_map(&png);
    }
    // without --stat the percentile, without --day the first; beside the file by default
    let text = String::from_utf8(ok(&["quicklook", &s(&file)]).stdout).unwrap();
    assert!(text.contains("quicklook_p90_doy200.png"), "{text}");
    assert_map(&dir.path().join("quicklook_p90_doy200.png"));
    let err = fails(&["quicklook", &s(&file), "--day", "5"]);
    assert!(err.contains("no target day 5 (the file holds days 200-201)"), "{err}");
    let err = fails(&["quicklook", &s(&file), "--stat", "p10"]);
    assert!(err.contains("no statistic 'p10' (the file holds: mean, p90)"), "{err}");
}
