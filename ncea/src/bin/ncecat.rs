nco_core::main!("ncecat", ncea::run);
