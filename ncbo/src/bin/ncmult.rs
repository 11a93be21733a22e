nco_core::main!("ncmult", ncbo::run);
