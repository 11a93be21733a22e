nco_core::main!("ncsub", ncbo::run);
