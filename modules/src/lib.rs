//! hwsim-modules
