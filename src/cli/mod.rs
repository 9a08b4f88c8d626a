//! The command line's library side: finding the files to check and cargo's workspaces.

pub mod workspace;
