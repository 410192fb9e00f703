//! `--format`: the command line's names for the output formats ([`Format`] itself is
//! plain, in `export`: clap knows it only here).

use clap::builder::PossibleValue;
use clap::ValueEnum;

use crate::export::Format;

impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &[Format::Text, Format::Json, Format::Csv, Format::Markdown]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Format::Text => PossibleValue::new("text").help(
                "Human-readable; for io-test, exactly the 1988 io_test program's seven lines",
            ),
            Format::Json => {
                PossibleValue::new("json").help("One JSON document with a record per measurement")
            }
            Format::Csv => PossibleValue::new("csv").help("One CSV row per measurement"),
            Format::Markdown => PossibleValue::new("markdown").help("A Markdown table"),
        })
    }
}
