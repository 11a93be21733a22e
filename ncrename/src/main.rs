nco_core::main!("ncrename", ncrename::run);
