//! Input path templates: `sst_{year}_{doy}.nc`,
//! `{year}{month}{day}120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc`, or
//! `/data/{year}/{doy}/file.nc`. Placeholders: `{year}` (4 digits), `{doy}` (ordinal day of
//! the file's date, 3 digits), `{month}` and `{day}` (2 digits). Placeholders always describe
//! the file's actual calendar date, whatever `--calendar` the job uses.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::calendar::Date;

/// One part of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Year,
    Doy,
    Month,
    Day,
}

/// A parsed path template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TemplateError {
    #[error("input template '{0}' has an unknown placeholder {{{1}}} (known: {{year}}, {{doy}}, {{month}}, {{day}})")]
    Unknown(String, String),
    #[error("input template '{0}' has an unclosed '{{'")]
    Unclosed(String),
    #[error("input template '{0}' needs {{year}} and either {{doy}} or both {{month}} and {{day}}")]
    Incomplete(String),
}

impl FromStr for Template {
    type Err = TemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut pieces = Vec::new();
        let mut rest = s;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                pieces.push(Piece::Text(rest[..open].to_string()));
            }
            let close = rest[open..].find('}').ok_or_else(|| TemplateError::Unclosed(s.into()))? + open;
            let name = &rest[open + 1..close];
            pieces.push(match name {
                "year" => Piece::Year,
                "doy" => Piece::Doy,
                "month" => Piece::Month,
                "day" => Piece::Day,
                other => return Err(TemplateError::Unknown(s.into(), other.into())),
            });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_string()));
        }
        Template::from_pieces(pieces).ok_or_else(|| TemplateError::Incomplete(s.into()))
    }
}

impl Template {
    /// A template from parts; `None` unless it can name every date uniquely.
    pub fn from_pieces(pieces: Vec<Piece>) -> Option<Template> {
        let has = |p: Piece| pieces.contains(&p);
        (has(Piece::Year) && (has(Piece::Doy) || (has(Piece::Month) && has(Piece::Day)))).then_some(Template { pieces })
    }

    /// This template with `prefix` (a directory) put in front, taken literally.
    pub fn with_prefix(&self, prefix: &str) -> Template {
        let mut pieces = vec![Piece::Text(prefix.to_string())];
        pieces.extend(self.pieces.iter().cloned());
        Template { pieces }
    }

    /// The path of the file holding `date`.
    pub fn expand(&self, date: Date) -> PathBuf {
        PathBuf::from(self.render(date))
    }

    fn render(&self, date: Date) -> String {
        let mut s = String::new();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => s.push_str(t),
                Piece::Year => s.push_str(&format!("{:04}", date.year)),
                Piece::Doy => s.push_str(&format!("{:03}", date.ordinal())),
                Piece::Month => s.push_str(&format!("{:02}", date.month)),
                Piece::Day => s.push_str(&format!("{:02}", date.day)),
            }
        }
        s
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.pieces {
            match p {
                Piece::Text(t) => f.write_str(t)?,
                Piece::Year => f.write_str("{year}")?,
                Piece::Doy => f.write_str("{doy}")?,
                Piece::Month => f.write_str("{month}")?,
                Piece::Day => f.write_str("{day}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_all_placeholders() {
        let d = Date::new(1991, 5, 27).unwrap();
        let t: Template = "/data/{year}/sst_{year}_{doy}.nc".parse().unwrap();
        assert_eq!(t.expand(d), PathBuf::from("/data/1991/sst_1991_147.nc"));
        let t: Template = "{year}{month}{day}120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc".parse().unwrap();
        assert_eq!(
            t.expand(Date::new(2020, 1, 2).unwrap()),
            PathBuf::from("20200102120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc")
        );
        assert_eq!(t.to_string(), "{year}{month}{day}120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc");
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(matches!("sst_{yr}.nc".parse::<Template>(), Err(TemplateError::Unknown(..))));
        assert!(matches!("sst_{year.nc".parse::<Template>(), Err(TemplateError::Unclosed(_))));
        assert!(matches!("sst_{year}_{month}.nc".parse::<Template>(), Err(TemplateError::Incomplete(_))));
        assert!(matches!("sst.nc".parse::<Template>(), Err(TemplateError::Incomplete(_))));
    }
}
