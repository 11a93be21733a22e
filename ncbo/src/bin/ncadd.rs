nco_core::main!("ncadd", ncbo::run);
