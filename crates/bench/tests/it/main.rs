//! The crate's integration tests, one module per former test binary: linked once instead of
//! once per file (docs/testing.md).
mod crypto_bench_rows;
mod gateway_bench_smoke;
mod gdoi_bench_rows;
