//! The inputs of `sweeper score`: evaluated candidates, each a config and a report.
//!
//! - JSON Lines: one `{"config": {...}, "report": {...}}` object per line (`config` may be
//!   left out: an empty config); blank lines and `#` lines are skipped.
//! - JSON array: `[{"config": ..., "report": ...}, ...]`.
//! - CSV: a header row; columns named after a known report metric
//!   ([`sweeper_score::KNOWN_METRICS`]) form the report, and every other column is config
//!   (`used_gpus`, `tp`, labels, source columns ...). Cells are typed: integers and finite
//!   numbers become JSON numbers, `true`/`false` booleans, anything else a string. An empty
//!   cell means the key is absent (the scorer's defaults apply).
//!
//! [`ReportTable`] reads one or several inputs (the shards of an array job) as one table, a
//! row at a time, and reads a row again from where it sits in its file
//! ([`ReportTable::fetch`]), so that a caller holds a few numbers per row, not the rows.

use super::adjust::{InputFormat, MapSeen, ReadOptions, TPOT, derive};
use super::bench::{bench_rows, format_of};
use super::csv_table::{RecordReader, RecordRef, for_each_text_row};
use super::json::{RowFaults, for_each_element, for_each_line, line_at};
use super::row::{ReportRow, at, checked_row, config_value};
use super::stream::{head, rewind};
use super::{InputError, Place, TableFormat, open_seekable, parse_number};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use sweeper_score::{KNOWN_METRICS, Report};

/// Where a row of a [`ReportTable`] sits, so that [`ReportTable::fetch`] reads it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowAt {
    /// The row's index in the table (counted across every input).
    pub index: usize,
    /// The row's first byte in its file (0 for an element of a JSON array).
    pub offset: u64,
    /// The row's length in bytes (0 for an element of a JSON array).
    pub len: u64,
}

/// One or several report inputs read as one table: rows are numbered from 0 across the
/// inputs in the order given (the second input's first row follows the first input's
/// last), and every error names the file it is in when there are several.
///
/// With several inputs, an input without data rows is noted and skipped (the table must
/// have one row somewhere), and CSV inputs must have the same columns, in any order.
///
/// ```
/// use std::io::Cursor;
/// use std::path::PathBuf;
/// use sweeper_tables::input::ReportTable;
///
/// let a = "tp,output_throughput_tok_s\n1,100\n2,250\n";
/// let b = "{\"config\": {\"tp\": 4}, \"report\": {\"output_throughput_tok_s\": 300}}\n";
/// let mut table = ReportTable::new(vec![
///     (PathBuf::from("a.csv"), Cursor::new(a)),
///     (PathBuf::from("b.jsonl"), Cursor::new(b)),
/// ]);
/// let mut best = None;
/// table.scan(|row, at| {
///     let tok_s = row.report.get("output_throughput_tok_s").unwrap_or(0.0);
///     if best.is_none_or(|(x, _)| tok_s > x) {
///         best = Some((tok_s, at));
///     }
/// })?;
/// let (_, at) = best.unwrap();
/// assert_eq!(at.index, 2); // the first row of b.jsonl
/// let again: Vec<_> = table.fetch(&[at])?.collect::<Result<_, _>>()?;
/// assert_eq!(again[0].config["tp"], 4);
/// # Ok::<(), sweeper_tables::input::InputError>(())
/// ```
#[derive(Debug)]
pub struct ReportTable<R> {
    shards: Vec<Shard<R>>,
    options: ReadOptions,
}

#[derive(Debug)]
struct Shard<R> {
    path: PathBuf,
    input: R,
    first_row: usize,
    rows: usize,
    layout: Layout,
    /// What the input was read as (known once read).
    format: InputFormat,
}

/// What the first reading learnt of an input, to read its rows again.
#[derive(Debug, Clone)]
enum Layout {
    Unread,
    /// No data rows.
    Empty,
    Csv {
        bom: u64,
        header: Vec<String>,
        metric: Vec<bool>,
    },
    Lines {
        bom: u64,
    },
    Array,
    /// A benchmark's file: its few rows, kept (they are read whole).
    Held(Vec<ReportRow>),
}

impl ReportTable<File> {
    /// Opens every path; `-` is standard input, copied to a temporary file as it is read
    /// so that its rows can be read again (it may be given once).
    pub fn open(paths: &[PathBuf]) -> Result<Self, InputError> {
        let mut inputs = Vec::with_capacity(paths.len());
        let mut stdin = false;
        for path in paths {
            let dash = path.as_os_str() == "-";
            if dash && std::mem::replace(&mut stdin, true) {
                return Err(super::stdin_twice());
            }
            inputs.push((path.clone(), open_seekable(path)?));
        }
        Ok(Self::new(inputs))
    }
}

impl<R: Read + Seek> ReportTable<R> {
    /// A table of these inputs, in this order (each named by its path in errors).
    pub fn new(inputs: Vec<(PathBuf, R)>) -> Self {
        ReportTable {
            shards: inputs
                .into_iter()
                .map(|(path, input)| Shard {
                    path,
                    input,
                    first_row: 0,
                    rows: 0,
                    layout: Layout::Unread,
                    format: InputFormat::Reports,
                })
                .collect(),
            options: ReadOptions::default(),
        }
    }

    /// This table, read as `options` say (format, keys renamed, keys derived).
    #[must_use]
    pub fn with_options(mut self, options: ReadOptions) -> Self {
        self.options = options;
        self
    }

    /// Each input with the format it was read as, once [`scan`](Self::scan) has read it.
    pub fn formats(&self) -> impl Iterator<Item = (&Path, InputFormat)> {
        self.shards.iter().map(|s| (s.path.as_path(), s.format))
    }

    /// Rows of every input, once [`scan`](Self::scan) has read them.
    pub fn rows(&self) -> usize {
        self.shards.iter().map(|s| s.rows).sum()
    }

    /// Reads every row of every input, in order, and hands each to `visit` with where it
    /// sits; returns notes for people about what was read in a way they may not expect: an
    /// input without data rows (when there are several), and one per CSV metric column
    /// with empty cells (each read as a missing metric), with the count over every input.
    pub fn scan(
        &mut self,
        mut visit: impl FnMut(ReportRow, RowAt),
    ) -> Result<Vec<String>, InputError> {
        let several = self.shards.len() > 1;
        let mut empty_cells: BTreeMap<String, usize> = BTreeMap::new();
        let mut notes = Vec::new();
        let mut first_header: Option<(PathBuf, Vec<String>)> = None;
        let mut row = 0;
        let options = &self.options;
        let mut seen = MapSeen::new(options);
        let mut nominal = 0_usize;
        for shard in &mut self.shards {
            shard.first_row = row;
            let read = scan_input(
                &shard.path,
                &mut shard.input,
                Scan {
                    first_row: row,
                    options,
                    seen: &mut seen,
                    nominal: &mut nominal,
                    format: &mut shard.format,
                },
                &mut empty_cells,
                several.then_some(&mut first_header),
                &mut visit,
            );
            let (layout, rows) = match read {
                Ok((_, 0)) | Err(InputError::Empty { .. }) if several => {
                    notes.push(format!(
                        "{}: no data rows; the other inputs are read",
                        shard.path.display()
                    ));
                    (Layout::Empty, 0)
                }
                Ok((_, 0)) => {
                    return Err(InputError::Empty {
                        path: shard.path.clone(),
                        detail: String::new(),
                    });
                }
                Ok(read) => read,
                Err(e) if several => return Err(e.in_file(&shard.path)),
                Err(e) => return Err(e),
            };
            shard.layout = layout;
            shard.rows = rows;
            row += rows;
        }
        if row == 0 {
            return Err(InputError::NoRows {
                paths: self.shards.iter().map(|s| s.path.clone()).collect(),
            });
        }
        seen.check(options)?;
        if nominal > 0 {
            notes.push(nominal_note(nominal));
        }
        notes.extend(empty_cells.into_iter().map(|(column, n)| {
            format!(
                "column {}: {n} empty cell{}, each read as a missing metric",
                crate::text::quote(&column),
                if n == 1 { "" } else { "s" }
            )
        }));
        Ok(notes)
    }

    /// The rows at `wanted`, read again, in that order (each as [`scan`](Self::scan) handed
    /// it out). A CSV or JSON Lines row is read from its offset; the rows of a JSON array
    /// are found by reading the array again, once per call, and held until handed out.
    pub fn fetch<'a>(&'a mut self, wanted: &'a [RowAt]) -> Result<Fetch<'a, R>, InputError> {
        let mut held = HashMap::new();
        for shard in &mut self.shards {
            if !matches!(shard.layout, Layout::Array) {
                continue;
            }
            let range = shard.first_row..shard.first_row + shard.rows;
            let mine: HashSet<usize> = wanted
                .iter()
                .map(|at| at.index)
                .filter(|i| range.contains(i))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let path = shard.path.clone();
            rewind(&path, &mut shard.input)?;
            let h = head(&path, &mut shard.input)?;
            for_each_element(&path, h.reader, shard.first_row, |place, value| {
                if mine.contains(&place.row) {
                    let (row, _) = json_report(&path, place, value, &self.options, None)?;
                    held.insert(place.row, row);
                }
                Ok(())
            })?;
        }
        Ok(Fetch {
            table: self,
            wanted: wanted.iter(),
            held,
            bytes: Vec::new(),
            csv: None,
        })
    }

    /// The input row `index` is in, and the options the table is read with.
    fn shard_of(&mut self, index: usize) -> (Option<&mut Shard<R>>, &ReadOptions) {
        let k = self
            .shards
            .partition_point(|s| s.first_row + s.rows <= index);
        let shard = self.shards.get_mut(k).filter(|s| index >= s.first_row);
        (shard, &self.options)
    }
}

/// The rows [`ReportTable::fetch`] reads again, in the order asked for.
#[derive(Debug)]
pub struct Fetch<'a, R> {
    table: &'a mut ReportTable<R>,
    wanted: std::slice::Iter<'a, RowAt>,
    held: HashMap<usize, ReportRow>,
    bytes: Vec<u8>,
    /// The parser of CSV rows read again, made at the first one.
    csv: Option<RecordReader>,
}

impl<R: Read + Seek> Fetch<'_, R> {
    fn read(&mut self, at: RowAt) -> Result<ReportRow, InputError> {
        if let Some(row) = self.held.remove(&at.index) {
            return Ok(row);
        }
        let gone = |path: &Path| InputError::Format {
            path: path.to_owned(),
            detail: format!("row {} is not in the table read", at.index),
        };
        let (shard, options) = self.table.shard_of(at.index);
        let Some(shard) = shard else {
            return Err(gone(Path::new("the table")));
        };
        if let Layout::Held(rows) = &shard.layout {
            return rows
                .get(at.index - shard.first_row)
                .cloned()
                .ok_or_else(|| gone(&shard.path));
        }
        let (bom, csv) = match &shard.layout {
            Layout::Csv {
                bom,
                header,
                metric,
            } => (*bom, Some((header, metric))),
            Layout::Lines { bom } => (*bom, None),
            _ => return Err(gone(&shard.path)),
        };
        let path = &shard.path;
        let io = |source| InputError::Io {
            path: path.clone(),
            source,
        };
        let len = usize::try_from(at.len).map_err(|_| gone(path))?;
        let bytes = match csv {
            Some(_) => self.csv.get_or_insert_with(RecordReader::new).bytes(),
            None => &mut self.bytes,
        };
        shard
            .input
            .seek(SeekFrom::Start(bom + at.offset))
            .map_err(io)?;
        bytes.resize(len, 0);
        shard.input.read_exact(bytes).map_err(io)?;
        // The line is known only to the first reading; nothing here reports it.
        let place = Place {
            line: None,
            row: at.index,
        };
        match (csv, &mut self.csv) {
            (Some((header, metric)), Some(again)) => {
                csv_row(place, header, metric, again.read(path)?, None, options).map(|(row, _)| row)
            }
            _ => json_report(path, place, line_at(path, &self.bytes)?, options, None)
                .map(|(row, _)| row),
        }
    }
}

impl<R: Read + Seek> Iterator for Fetch<'_, R> {
    type Item = Result<ReportRow, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = *self.wanted.next()?;
        Some(self.read(at))
    }
}

/// What the reading of one input shares with the table's.
struct Scan<'a> {
    /// The index of the input's first row in the table.
    first_row: usize,
    options: &'a ReadOptions,
    /// The `--map` sources seen so far.
    seen: &'a mut MapSeen,
    /// Rows given the nominal hour so far.
    nominal: &'a mut usize,
    /// Set to what the input is read as.
    format: &'a mut InputFormat,
}

/// Reads one input of a table (its rows numbered from `scan.first_row`); returns what is
/// needed to read its rows again and how many it has. `first_header` is the first CSV
/// header of a table of several inputs, which every later CSV input must match.
fn scan_input<R: Read + Seek>(
    path: &Path,
    input: &mut R,
    scan: Scan<'_>,
    empty: &mut BTreeMap<String, usize>,
    first_header: Option<&mut Option<(PathBuf, Vec<String>)>>,
    visit: &mut dyn FnMut(ReportRow, RowAt),
) -> Result<(Layout, usize), InputError> {
    let Scan {
        first_row,
        options,
        seen,
        nominal,
        format,
    } = scan;
    rewind(path, input)?;
    let sniffed = head(path, &mut *input)?.format;
    *format = format_of(path, input, sniffed, options.format)?;
    rewind(path, input)?;
    let h = head(path, input)?;
    let bom = h.bom;
    if *format != InputFormat::Reports {
        let rows = bench_rows(path, h.reader, *format, first_row, options, seen, nominal)?;
        for (k, row) in rows.iter().enumerate() {
            let at = RowAt {
                index: first_row + k,
                offset: 0,
                len: 0,
            };
            visit(row.clone(), at);
        }
        let n = rows.len();
        return Ok((Layout::Held(rows), n));
    }
    let mut note_row = |row: ReportRow, derived: super::adjust::Derived, at: RowAt| {
        if derived.nominal_hour {
            *nominal += 1;
        }
        visit(row, at);
    };
    match h.format {
        TableFormat::Csv => {
            let mut rows = 0;
            let on_header = |header: &[String]| {
                match first_header {
                    Some(Some((first, columns))) => same_columns(path, header, first, columns)?,
                    Some(slot) => *slot = Some((path.to_owned(), header.to_vec())),
                    None => {}
                }
                seen.names(header.iter());
                for (k, (from, _)) in options.map.iter().enumerate() {
                    if header.contains(from) {
                        seen.hit(k);
                    }
                }
                let renamed: Vec<String> = header
                    .iter()
                    .map(|h| options.mapped(h).to_owned())
                    .collect();
                if let Some(twice) = renamed
                    .iter()
                    .enumerate()
                    .find(|(k, n)| renamed[..*k].contains(n))
                    .map(|(_, n)| n)
                {
                    return Err(InputError::Format {
                        path: path.to_owned(),
                        detail: format!(
                            "after --map the header names {} twice; map onto a name the \
                             header does not have",
                            crate::text::quote(twice)
                        ),
                    });
                }
                let metric = renamed.iter().map(|h| is_report_column(h)).collect();
                Ok((renamed, metric))
            };
            let each =
                |state: &(Vec<String>, Vec<bool>), _: &[String], row, text: RecordRef<'_>| {
                    let (header, metric) = state;
                    let place = Place {
                        line: text.line,
                        row,
                    };
                    let (report, derived) = csv_row(
                        place,
                        header,
                        metric,
                        text.cells,
                        Some(&mut *empty),
                        options,
                    )?;
                    rows += 1;
                    note_row(
                        report,
                        derived,
                        RowAt {
                            index: row,
                            offset: text.offset,
                            len: text.len,
                        },
                    );
                    Ok(())
                };
            let (_, (header, metric)) =
                for_each_text_row(path, h.reader, first_row, on_header, each)?;
            Ok((
                Layout::Csv {
                    bom,
                    header,
                    metric,
                },
                rows,
            ))
        }
        TableFormat::JsonLines => {
            let rows = for_each_line(
                path,
                h.reader,
                first_row,
                RowFaults::InLineOrder,
                |place, value, span| {
                    let (row, derived) = json_report(path, place, value, options, Some(seen))?;
                    note_row(
                        row,
                        derived,
                        RowAt {
                            index: place.row,
                            offset: span.offset,
                            len: span.len,
                        },
                    );
                    Ok(())
                },
            )?;
            Ok((Layout::Lines { bom }, rows))
        }
        TableFormat::JsonArray => {
            let rows = for_each_element(path, h.reader, first_row, |place, value| {
                let (row, derived) = json_report(path, place, value, options, Some(seen))?;
                note_row(
                    row,
                    derived,
                    RowAt {
                        index: place.row,
                        offset: 0,
                        len: 0,
                    },
                );
                Ok(())
            })?;
            Ok((Layout::Array, rows))
        }
        TableFormat::Npy => Err(InputError::Format {
            path: path.to_owned(),
            detail: "a .npy matrix has no configs or report keys; `sweeper score` reads \
                     JSON Lines, a JSON array or CSV (`sweeper front` reads .npy)"
                .to_owned(),
        }),
    }
}

/// Whether a CSV column (as renamed) is part of the report: a metric the scorer knows, or
/// the TPOT that tok/s/user is derived from.
fn is_report_column(name: &str) -> bool {
    KNOWN_METRICS.contains(&name) || name == TPOT
}

/// Checks that a CSV input of a table has the columns of the table's first CSV input.
fn same_columns(
    path: &Path,
    header: &[String],
    first: &Path,
    columns: &[String],
) -> Result<(), InputError> {
    // Sets, so that two headers of many columns compare in linear time.
    let here: HashSet<&str> = header.iter().map(String::as_str).collect();
    let there: HashSet<&str> = columns.iter().map(String::as_str).collect();
    let missing: Vec<String> = columns
        .iter()
        .filter(|c| !here.contains(c.as_str()))
        .map(|c| crate::text::quote(c))
        .collect();
    let extra: Vec<String> = header
        .iter()
        .filter(|c| !there.contains(c.as_str()))
        .map(|c| crate::text::quote(c))
        .collect();
    if missing.is_empty() && extra.is_empty() {
        return Ok(());
    }
    let mut differences = Vec::new();
    if !missing.is_empty() {
        differences.push(format!("it lacks {}", missing.join(", ")));
    }
    if !extra.is_empty() {
        differences.push(format!(
            "{} {} not in {}",
            extra.join(", "),
            if extra.len() == 1 { "is" } else { "are" },
            first.display()
        ));
    }
    Err(InputError::Format {
        path: path.to_owned(),
        detail: format!(
            "the CSV header differs from {}'s: {}. CSV inputs read as one table need the same \
             columns (in any order): give every shard the same header",
            first.display(),
            differences.join("; ")
        ),
    })
}

/// Reads every candidate of a JSON Lines, JSON array or CSV file (decided by content); the
/// path `-` reads standard input.
pub fn read_reports(path: &Path) -> Result<Vec<ReportRow>, InputError> {
    let mut rows = Vec::new();
    ReportTable::open(&[path.to_owned()])?.scan(|row, _| rows.push(row))?;
    Ok(rows)
}

/// [`read_reports`] of bytes already in memory; `path` only names them in errors.
pub fn parse_reports(path: &Path, bytes: &[u8]) -> Result<Vec<ReportRow>, InputError> {
    parse_reports_with_notes(path, bytes).map(|(rows, _)| rows)
}

/// [`parse_reports`], with notes for people about what was read in a way they may not
/// expect: one per CSV metric column with empty cells (each read as a missing metric), with
/// the count.
pub fn parse_reports_with_notes(
    path: &Path,
    bytes: &[u8],
) -> Result<(Vec<ReportRow>, Vec<String>), InputError> {
    let mut rows = Vec::new();
    let notes = for_each_report(path, bytes, |row| rows.push(row))?;
    Ok((rows, notes))
}

/// [`parse_reports_with_notes`] one row at a time: hands every candidate to `visit` as it
/// is read, in input order, and returns the notes ([`ReportTable`] of one input).
pub fn for_each_report(
    path: &Path,
    bytes: &[u8],
    mut visit: impl FnMut(ReportRow),
) -> Result<Vec<String>, InputError> {
    ReportTable::new(vec![(path.to_owned(), Cursor::new(bytes))]).scan(|row, _| visit(row))
}

/// The note on rows given the nominal hour (see [`super::adjust`]).
pub(super) fn nominal_note(nominal: usize) -> String {
    format!(
        "{nominal} row{} no run duration: each is given one nominal hour (duration_ms \
         3600000, gpu_hours = its GPU count), so that avg_gpu is its GPU count exactly; that \
         duration_ms is not the run's",
        if nominal == 1 { " has" } else { "s have" }
    )
}

/// One `{"config": ..., "report": ...}` row, its keys renamed and derived as `options`
/// say; `seen` notes the `--map` sources it has (first reading).
fn json_report(
    path: &Path,
    place: Place,
    value: Value,
    options: &ReadOptions,
    seen: Option<&mut MapSeen>,
) -> Result<(ReportRow, super::adjust::Derived), InputError> {
    let shape = |detail: &str| InputError::Format {
        path: path.to_owned(),
        detail: format!("{place}: {detail}"),
    };
    let Value::Object(mut object) = value else {
        return Err(shape(
            "expected an object {\"config\": {...}, \"report\": {...}}",
        ));
    };
    if let Some(key) = object.keys().find(|k| *k != "config" && *k != "report") {
        return Err(shape(&format!(
            "unknown key `{key}`; a row has only `config` and `report` (a benchmark's own \
             result file is read with --input-format vllm, sglang or genai-perf)"
        )));
    }
    let mut config = match object.remove("config") {
        None => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(shape("`config` must be an object")),
    };
    let mut report_value = object
        .remove("report")
        .ok_or_else(|| shape("missing `report`"))?;
    let mut scratch = MapSeen::default();
    let seen = seen.unwrap_or(&mut scratch);
    options.rename(&mut config, seen).map_err(|e| shape(&e))?;
    if let Value::Object(report) = &mut report_value {
        options.rename(report, seen).map_err(|e| shape(&e))?;
    }
    let report = Report::from_json(place.row, &report_value).map_err(|e| at(place, e))?;
    finish_row(place, config, report, options)
}

/// A row read, with the keys `options` derive: checked and ready.
fn finish_row(
    place: Place,
    mut config: Map<String, Value>,
    report: Report,
    options: &ReadOptions,
) -> Result<(ReportRow, super::adjust::Derived), InputError> {
    let mut metrics: BTreeMap<String, f64> =
        report.iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let derived = derive(place, options, false, &mut config, &mut metrics)?;
    let report = if derived == super::adjust::Derived::default() && metrics.len() == report.len() {
        report
    } else {
        Report::from_map(place.row, metrics).map_err(|e| at(place, e))?
    };
    Ok((checked_row(place, config, report)?, derived))
}

/// One CSV data row as a candidate; `empty` counts the empty metric cells (first reading).
fn csv_row(
    place: Place,
    headers: &[String],
    is_metric: &[bool],
    cells: &csv::StringRecord,
    mut empty: Option<&mut BTreeMap<String, usize>>,
    options: &ReadOptions,
) -> Result<(ReportRow, super::adjust::Derived), InputError> {
    let mut config = Map::new();
    let mut metrics = BTreeMap::new();
    for ((name, cell), &metric) in headers.iter().zip(cells).zip(is_metric) {
        if metric {
            if cell.trim().is_empty() {
                if let Some(empty) = empty.as_deref_mut() {
                    *empty.entry(name.clone()).or_insert(0) += 1;
                }
                continue;
            }
            let x = parse_number(cell).map_err(|detail| InputError::Value {
                place,
                column: name.clone(),
                detail,
            })?;
            metrics.insert(name.clone(), x);
        } else if let Some(v) = config_value(cell) {
            config.insert(name.clone(), v);
        }
    }
    let derived = derive(place, options, false, &mut config, &mut metrics)?;
    let report = Report::from_map(place.row, metrics).map_err(|e| at(place, e))?;
    Ok((checked_row(place, config, report)?, derived))
}

#[cfg(test)]
mod tests;
