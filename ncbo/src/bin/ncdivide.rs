nco_core::main!("ncdivide", ncbo::run);
