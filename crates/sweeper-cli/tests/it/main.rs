//! Integration tests of the `sweeper` binary, one module per subcommand.

mod validate;
