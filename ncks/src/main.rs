nco_core::main!("ncks", ncks::run);
