//! Shared parts of snowdrift's fuzz targets: an independent model of the text forms, a
//! clock scripted by the fuzz input, and the generator guarantees checked after every call.

pub mod check;
pub mod clock;
pub mod drive;
pub mod input;
pub mod model;
pub mod text;
