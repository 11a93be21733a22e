nco_core::main!("ncbo", ncbo::run);
