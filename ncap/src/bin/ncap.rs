nco_core::main!("ncap", ncap::run);
