//! The `zest` command. Empty for now: it arrives once zest-blocking can serve and call.

fn main() {
    eprintln!("zest: the command line arrives with a later issue; see README.md");
    std::process::exit(2);
}
