//! End-to-end tests of the `deja` binary, in one test binary: the pipeline over
//! synthetic homes ([`e2e`]), every adapter's fixture store in one home
//! ([`every_harness`]), the recall commands ([`recall`]) and the MCP server
//! ([`mcp`]).

mod e2e;
mod every_harness;
mod mcp;
mod recall;

mod support {
    pub mod recall_home;
}
