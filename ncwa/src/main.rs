nco_core::main!("ncwa", ncwa::run);
