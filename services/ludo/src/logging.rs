//! Log lines on stderr: their format, and colour only where a person reads
//! them (a terminal), never in a file or a pipe.

use std::io::IsTerminal;

use clap::ValueEnum;

/// `--log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Text, coloured when stderr is a terminal and `NO_COLOR` is not set.
    Auto,
    /// Text, never coloured (`human` is the name it had before).
    #[value(alias = "human")]
    Text,
    /// One JSON object per line, every field a JSON field.
    Json,
}

/// `--access-log`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

impl From<Switch> for ludo_server::AccessLog {
    fn from(switch: Switch) -> Self {
        match switch {
            Switch::On => ludo_server::AccessLog::On,
            Switch::Off => ludo_server::AccessLog::Off,
        }
    }
}

/// Whether `format` colours its lines, given whether stderr is a terminal
/// and the value of `NO_COLOR` (<https://no-color.org>: set and not empty
/// means no colour).
fn coloured(format: LogFormat, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    format == LogFormat::Auto && terminal && no_color.is_none_or(std::ffi::OsStr::is_empty)
}

/// Sends log lines to stderr in `format`, at the levels `RUST_LOG` names
/// (default `info`).
pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = coloured(format, std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR").as_deref());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    match format {
        LogFormat::Auto | LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_auto_on_a_terminal_without_no_color_colours() {
        use std::ffi::OsStr;
        assert!(coloured(LogFormat::Auto, true, None));
        assert!(coloured(LogFormat::Auto, true, Some(OsStr::new(""))), "an empty NO_COLOR is no request");
        assert!(!coloured(LogFormat::Auto, true, Some(OsStr::new("1"))));
        assert!(!coloured(LogFormat::Auto, false, None), "a file or a pipe");
        for format in [LogFormat::Text, LogFormat::Json] {
            assert!(!coloured(format, true, None) && !coloured(format, false, None), "{format:?}");
        }
    }

    #[test]
    fn human_is_still_accepted_as_text() {
        assert_eq!(LogFormat::from_str("human", false), Ok(LogFormat::Text));
        assert_eq!(LogFormat::from_str("auto", false), Ok(LogFormat::Auto));
    }
}
