//! The `sstclim` command: a client of the library (`sstclim::cli`).

fn main() -> std::process::ExitCode {
    sstclim::command_line_main()
}
