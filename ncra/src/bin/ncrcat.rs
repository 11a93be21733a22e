nco_core::main!("ncrcat", ncra::run);
