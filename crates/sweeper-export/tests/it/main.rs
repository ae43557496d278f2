//! The integration tests of `sweeper-export`: one binary, one module per area.

mod cases;
mod golden;
mod schema;
mod select;
mod shapes;
mod validator;
