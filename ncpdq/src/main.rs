nco_core::main!("ncpdq", ncpdq::run);
