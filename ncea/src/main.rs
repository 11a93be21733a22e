nco_core::main!("ncea", ncea::run);
