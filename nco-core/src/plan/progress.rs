//! Progress bars on a terminal only: silent when stderr is not a terminal (pipes, CI),
//! so that scripted use sees nothing but results and errors.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar over `total` steps labelled `what`, hidden unless stderr is a terminal.
pub fn bar(total: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    let style = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({eta})")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    pb.set_style(style);
    pb.set_message(what.to_string());
    pb
}
