nco_core::main!("ncap2", ncap::run);
