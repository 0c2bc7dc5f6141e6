//! Events held as columns, one vector per output field, as they are found.
//!
//! Why: events.nc stores one variable per field; building each variable from a vector of
//! [`Event`] structs reads every event's whole struct once per field (about forty passes over
//! the catalogue). Workers push each event's fields into their chunk's columns instead, and
//! the writer joins the chunks' columns one field at a time.

use super::metrics::Event;

/// The integer fields, in the order of [`super::files::schema::INT_FIELDS`]: `index_start`,
/// `index_end`, `index_peak`, `duration`, `duration_{moderate,strong,severe,extreme}`.
pub const N_INTS: usize = 8;

/// Events of a run of cells, field by field, in cell then start order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventColumns {
    /// The event's cell, as an index into the grid (`lat_index * nlon + lon_index`).
    pub cell: Vec<usize>,
    pub ints: [Vec<i32>; N_INTS],
    /// [`super::metrics::FLOAT_FIELDS`], in that order.
    pub floats: [Vec<f64>; 14],
    pub category: Vec<i8>,
}

impl EventColumns {
    pub fn len(&self) -> usize {
        self.cell.len()
    }

    /// `other`'s events after these.
    pub fn append(&mut self, other: &EventColumns) {
        self.cell.extend_from_slice(&other.cell);
        for (a, b) in self.ints.iter_mut().zip(&other.ints) {
            a.extend_from_slice(b);
        }
        for (a, b) in self.floats.iter_mut().zip(&other.floats) {
            a.extend_from_slice(b);
        }
        self.category.extend_from_slice(&other.category);
    }

    pub fn is_empty(&self) -> bool {
        self.cell.is_empty()
    }

    /// Append event `e` of grid cell `cell`.
    pub fn push(&mut self, cell: usize, e: &Event) {
        self.cell.push(cell);
        let ints = [
            e.index_start as i32,
            e.index_end as i32,
            e.index_peak as i32,
            e.duration as i32,
            e.duration_moderate as i32,
            e.duration_strong as i32,
            e.duration_severe as i32,
            e.duration_extreme as i32,
        ];
        for (col, v) in self.ints.iter_mut().zip(ints) {
            col.push(v);
        }
        for (col, v) in self.floats.iter_mut().zip(e.floats()) {
            col.push(v);
        }
        self.category.push(e.category as i8);
    }

    /// Columns of `events` (grid cell, event), in their order.
    pub fn of(events: &[(usize, Event)]) -> EventColumns {
        let mut c = EventColumns::default();
        for (cell, e) in events {
            c.push(*cell, e);
        }
        c
    }
}

/// One column of every chunk, joined: `pick` selects the column of a chunk.
pub fn joined<T: Copy>(chunks: &[EventColumns], pick: impl Fn(&EventColumns) -> &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(chunks.iter().map(|c| c.len()).sum());
    for c in chunks {
        out.extend_from_slice(pick(c));
    }
    out
}
