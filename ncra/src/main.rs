nco_core::main!("ncra", ncra::run);
