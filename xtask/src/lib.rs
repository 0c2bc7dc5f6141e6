//! sstclim's source checks, run by `scripts/test.sh`: the layer and circle rules over the
//! crate's imports (read with a Rust parser, `syn`, so that grouped `use` trees, `super::`,
//! re-exports and paths written inline all count) and the function-length cap.
//!
//! ```text
//! cargo run --release --locked -p xtask -- layers src
//! cargo run --release --locked -p xtask -- fn-length src
//! ```

pub mod fnlen;
pub mod layers;
pub mod tree;

#[cfg(test)]
mod tests;
