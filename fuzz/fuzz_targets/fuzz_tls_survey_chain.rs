//! The survey describes whatever certificates a server sends (`gander tls survey`): arbitrary
//! DER, one certificate or a split into several, must give a description or an error, never a
//! panic.
#![no_main]
use gander_tls::survey::chain;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = chain::describe(data, 1_800_000_000);
    // The first byte splits the input into a two-certificate chain.
    if let Some((&cut, rest)) = data.split_first() {
        let at = usize::from(cut).min(rest.len());
        let _ = chain::describe_chain(&[rest[..at].to_vec(), rest[at..].to_vec()], 0);
    }
});
