//! Reading the user's files: decoding against netCDF4-python, the direct, library and forked
//! read paths, compressed and chunked storage, the HDF5 metadata parser, text attributes,
//! per-file attributes, grids, and damaged or bad input refused in one line, never a panic.

mod bad_input;
mod chunk_keys;
mod compressed_job;
mod compressed_read;
mod curvilinear;
mod decode_fixtures;
mod forked_readers;
mod h5meta;
mod header_fuzz;
mod per_file_attributes;
mod string_attributes;
mod string_attributes_cli;
