//! hwsim
