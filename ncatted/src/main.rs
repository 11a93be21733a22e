nco_core::main!("ncatted", ncatted::run);
