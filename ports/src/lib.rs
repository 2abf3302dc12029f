//! hwsim-ports
