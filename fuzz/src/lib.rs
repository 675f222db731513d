//! Shared parts of snowdrift's fuzz targets: an independent model of the text forms.

pub mod text;
