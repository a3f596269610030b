//! End-to-end tests of the `deja` binary, in one test binary: the pipeline over
//! synthetic homes ([`e2e`]), the recall commands ([`recall`]) and the MCP server
//! ([`mcp`]).

mod e2e;
mod mcp;
mod recall;

mod support {
    pub mod recall_home;
}
