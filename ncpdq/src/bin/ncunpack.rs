nco_core::main!("ncunpack", ncpdq::run);
