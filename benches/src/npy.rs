//! Just enough of `NumPy`'s `.npy` format (version 1.0, little-endian float64, C order,
//! shape (n, d)) to hand the benchmark data to the peers and read it back.

use std::io::{self, Read, Write};

const MAGIC: &[u8] = b"\x93NUMPY";

/// Writes `data` (`n × d`, row-major) as a `.npy` file.
pub fn write(mut out: impl Write, data: &[f64], d: usize) -> io::Result<()> {
    let n = data.len() / d;
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n}, {d}), }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    out.write_all(MAGIC)?;
    out.write_all(&[1, 0])?;
    let len = u16::try_from(header.len()).map_err(io::Error::other)?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(header.as_bytes())?;
    let mut buf = Vec::with_capacity(data.len() * 8);
    for x in data {
        buf.extend_from_slice(&x.to_le_bytes());
    }
    out.write_all(&buf)
}

/// Reads a `.npy` file written by [`write()`] (or `NumPy`: `<f8`, C order, 2-D); returns the
/// data and d.
pub fn read(mut input: impl Read) -> io::Result<(Vec<f64>, usize)> {
    let bad = |m: &str| io::Error::new(io::ErrorKind::InvalidData, m.to_owned());
    let mut pre = [0u8; 10];
    input.read_exact(&mut pre)?;
    if &pre[..6] != MAGIC || pre[6] != 1 {
        return Err(bad("not a version 1 .npy file"));
    }
    let hlen = u16::from_le_bytes([pre[8], pre[9]]) as usize;
    let mut header = vec![0u8; hlen];
    input.read_exact(&mut header)?;
    let header = String::from_utf8_lossy(&header);
    if !header.contains("'<f8'") || header.contains("'fortran_order': True") {
        return Err(bad("expected little-endian float64 in C order"));
    }
    let shape = header
        .split("'shape': (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let dims: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| bad("bad shape"))?;
    let [n, d] = dims[..] else {
        return Err(bad("expected a 2-D array"));
    };
    let mut bytes = vec![0u8; n * d * 8];
    input.read_exact(&mut bytes)?;
    let data = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    Ok((data, d))
}
