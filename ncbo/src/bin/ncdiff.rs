nco_core::main!("ncdiff", ncbo::run);
