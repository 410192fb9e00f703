//! Tables for people, laid out by `comfy-table`: plain text (columns two spaces
//! apart, no rules) and GitHub-flavoured Markdown (with each column's alignment).

use comfy_table::presets::{ASCII_MARKDOWN, NOTHING};
use comfy_table::{CellAlignment, Table};

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: names, directions.
    Left,
    /// Numbers.
    Right,
}

/// A table: column names with their alignment, and rows of cells.
#[derive(Debug, Clone, Default)]
pub struct Grid {
    columns: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Grid {
    /// A table of these columns and no rows.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            columns: columns
                .iter()
                .map(|(name, a)| (name.to_string(), *a))
                .collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (one cell per column).
    pub fn row(&mut self, cells: Vec<String>) -> &mut Self {
        self.rows.push(cells);
        self
    }

    fn table(&self, md: bool) -> Table {
        let mut t = Table::new();
        t.load_style(if md { ASCII_MARKDOWN } else { NOTHING });
        let cell = |s: &str| {
            if md {
                s.replace('|', "\\|")
            } else {
                s.to_string()
            }
        };
        t.set_header(self.columns.iter().map(|(n, _)| cell(n)));
        for r in &self.rows {
            t.add_row(r.iter().map(|c| cell(c)));
        }
        let last = self.columns.len().saturating_sub(1);
        for (i, col) in t.column_iter_mut().enumerate() {
            col.set_cell_alignment(match self.columns.get(i).map(|c| c.1) {
                Some(Align::Right) => CellAlignment::Right,
                _ => CellAlignment::Left,
            });
            if !md {
                col.set_padding((0, if i == last { 0 } else { 2 }));
            }
        }
        t
    }

    /// The table as text: a header line, then a line per row, columns two spaces
    /// apart, no trailing spaces.
    pub fn text(&self) -> String {
        lines(self.table(false).lines())
    }

    /// The table as Markdown: `|` in cells escaped, `---:` under right-aligned
    /// columns.
    pub fn markdown(&self) -> String {
        let mut out = Vec::new();
        for (i, line) in self.table(true).lines().enumerate() {
            if i == 1 {
                // The header separator `|------|------|`: mark the alignment.
                let cells: Vec<String> = line
                    .trim_matches('|')
                    .split('|')
                    .zip(&self.columns)
                    .map(|(dashes, (_, a))| match a {
                        Align::Right => format!("{}:", &dashes[..dashes.len().saturating_sub(1)]),
                        Align::Left => dashes.to_string(),
                    })
                    .collect();
                out.push(format!("|{}|", cells.join("|")));
            } else {
                out.push(line);
            }
        }
        lines(out.into_iter())
    }
}

fn lines(lines: impl Iterator<Item = String>) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(l.trim_end());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        let mut g = Grid::new(&[("name", Align::Left), ("bytes/s", Align::Right)]);
        g.row(vec!["bench".into(), "35714".into()]);
        g.row(vec!["a|b".into(), "9".into()]);
        g
    }

    #[test]
    fn text_columns_line_up() {
        assert_eq!(
            grid().text(),
            "name   bytes/s\nbench    35714\na|b          9\n"
        );
        assert_eq!(Grid::new(&[("only", Align::Left)]).text(), "only\n");
    }

    #[test]
    fn markdown_with_alignment_and_escapes() {
        assert_eq!(
            grid().markdown(),
            "| name  | bytes/s |\n|-------|--------:|\n| bench |   35714 |\n| a\\|b  |       9 |\n"
        );
    }
}
