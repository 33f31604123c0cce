#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| layerlock_fuzz::cmd(data));
