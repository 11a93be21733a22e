nco_core::main!("ncflint", ncflint::run);
