nco_core::main!("ncpack", ncpdq::run);
