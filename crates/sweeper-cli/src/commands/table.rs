//! Aligned text tables for people (stdout's `--format table`).

/// Renders a header and rows as aligned columns; numbers (cells that parse as `f64`) are
/// right-aligned, text left-aligned. Control characters in cells (a config value, a label
/// from a report) are escaped, so that a table cannot drive the terminal.
pub(crate) fn render(header: &[String], rows: &[Vec<String>]) -> String {
    let header: Vec<String> = header
        .iter()
        .map(|h| sweeper_engine::text::escape_controls(h))
        .collect();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| sweeper_engine::text::escape_controls(c))
                .collect()
        })
        .collect();
    let (header, rows) = (&header[..], &rows[..]);
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        let mut parts = Vec::with_capacity(columns);
        for (i, width) in widths.iter().enumerate() {
            let cell = cells.get(i).map_or("", String::as_str);
            let pad = width - cell.chars().count();
            if cell.parse::<f64>().is_ok() {
                parts.push(format!("{}{cell}", " ".repeat(pad)));
            } else {
                parts.push(format!("{cell}{}", " ".repeat(pad)));
            }
        }
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(header, &mut out);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&rule, &mut out);
    for row in rows {
        line(row, &mut out);
    }
    out
}

/// A number for a table cell: integers as integers, others with 4 significant decimals.
pub(crate) fn number(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_numbers_right_and_text_left() {
        let t = render(
            &["name".into(), "value".into()],
            &[
                vec!["a".into(), "1".into()],
                vec!["long".into(), "123.5".into()],
            ],
        );
        assert_eq!(t, "name  value\n----  -----\na         1\nlong  123.5\n");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(1234.567), "1234.6");
        assert_eq!(number(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn escapes_control_characters_in_cells() {
        let t = render(&["router".into()], &[vec!["\u{1b}[2Jkv\u{7}".into()]]);
        assert!(!t.contains('\u{1b}') && !t.contains('\u{7}'), "{t:?}");
        assert!(t.contains("\\e[2Jkv\\u{7}"), "{t:?}");
    }
}
