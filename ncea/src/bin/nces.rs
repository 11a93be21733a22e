nco_core::main!("nces", ncea::run);
