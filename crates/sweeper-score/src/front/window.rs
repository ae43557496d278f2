//! The window of the block-nested loops (the pass, the small-input loop and the sorted
//! filter): canonical rows held column by column, so that testing a row against 16 window
//! rows is a few contiguous vector loads and compares per column. Row-major `[f64; D]`
//! rows made the compiler transpose every 16-row chunk first (for d = 5, about as many
//! shuffles as compares), and the compares of a vector dominance test all go to one
//! execution port on the machines we measured.
//!
//! Every column is padded with `-inf` rows to a whole number of [`SCAN`]-row chunks; such
//! a row dominates nothing, so the tests need no remainder loop.

use super::simd::Lanes;

/// Window rows tested together.
pub(crate) const SCAN: usize = 16;

/// Canonical rows, column-major.
pub(crate) struct Window<const D: usize> {
    /// Column `j` is `buf[j * cap..(j + 1) * cap]`; rows `len..cap` are `-inf`.
    buf: Vec<f64>,
    /// Rows the buffer holds at most (a multiple of [`SCAN`]).
    cap: usize,
    /// Rows held.
    len: usize,
}

impl<const D: usize> Window<D> {
    /// An empty window with room for `rows` rows (it grows past them when needed).
    pub(crate) fn with_capacity(rows: usize) -> Self {
        let cap = rows.max(1).div_ceil(SCAN) * SCAN;
        Window {
            buf: vec![f64::NEG_INFINITY; cap * D],
            cap,
            len: 0,
        }
    }

    /// A window holding `rows`, in order, with room for `extra` more.
    pub(crate) fn from_rows(rows: &[[f64; D]], extra: usize) -> Self {
        let mut w = Self::with_capacity(rows.len() + extra);
        for p in rows {
            w.push(p);
        }
        w
    }

    /// Rows held.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether another row fits without growing.
    #[inline]
    pub(crate) fn has_room(&self) -> bool {
        self.len < self.cap
    }

    /// Appends `p`, doubling the room first when it is full.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    pub(crate) fn push(&mut self, p: &[f64; D]) {
        if !self.has_room() {
            self.grow();
        }
        for (j, &x) in p.iter().enumerate() {
            self.buf[j * self.cap + self.len] = x;
        }
        self.len += 1;
    }

    /// Doubles the room.
    #[cold]
    fn grow(&mut self) {
        let cap = 2 * self.cap;
        let mut buf = vec![f64::NEG_INFINITY; cap * D];
        for j in 0..D {
            buf[j * cap..][..self.len].copy_from_slice(&self.buf[j * self.cap..][..self.len]);
        }
        self.buf = buf;
        self.cap = cap;
    }

    /// Row `i`, or a row of `-inf` (which dominates nothing) past the end.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    pub(crate) fn row(&self, i: usize) -> [f64; D] {
        if i < self.len {
            std::array::from_fn(|j| self.buf[j * self.cap + i])
        } else {
            [f64::NEG_INFINITY; D]
        }
    }

    /// The first `H` rows, `-inf` rows past the end.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    pub(crate) fn head<const H: usize>(&self) -> [[f64; D]; H] {
        std::array::from_fn(|k| self.row(k))
    }

    /// Chunk `c` of every column.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    fn chunk(&self, c: usize) -> [&[f64; SCAN]; D] {
        std::array::from_fn(|j| {
            self.buf[j * self.cap + c * SCAN..][..SCAN]
                .try_into()
                .expect("a whole chunk")
        })
    }

    /// The index of the first row that dominates `p`, if any.
    ///
    /// The vector test is "at least as good in every column" only (half the compares of a
    /// full dominance test); the rows that pass it are checked for "better in one" one by
    /// one, which fails only for rows equal to `p`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    pub(crate) fn first_dominator<L: Lanes>(&self, lanes: L, p: &[f64; D]) -> Option<usize> {
        let q = lanes.splat_row(p);
        for c in 0..self.len.div_ceil(SCAN) {
            let cols = self.chunk(c);
            let mut m = lanes.ge_all(cols, &q);
            while m != 0 {
                let k = m.trailing_zeros() as usize;
                m &= m - 1;
                if (0..D).any(|j| cols[j][k] > p[j]) {
                    return Some(c * SCAN + k);
                }
            }
        }
        None
    }

    /// The rows of chunk `c` that `p` dominates, as a bit set; padding rows never count.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    fn chunk_dominated_by<L: Lanes>(&self, lanes: L, p: &[L::Splat; D], c: usize) -> u32 {
        let m = lanes.dominated(self.chunk(c), p);
        // Padding rows (-inf) can be dominated; they lie past `len`, cut off here.
        let rows = (self.len - c * SCAN).min(SCAN);
        m & (u32::MAX >> (32 - rows))
    }

    /// The rows that `p` dominates, as a bit set (bit `i % 64` of word `i / 64`).
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    pub(crate) fn dominated_by<L: Lanes>(&self, lanes: L, p: &[f64; D]) -> Vec<u64> {
        let q = lanes.splat_row(p);
        let mut bits = vec![0u64; self.len.div_ceil(64)];
        for c in 0..self.len.div_ceil(SCAN) {
            bits[c * SCAN / 64] |=
                u64::from(self.chunk_dominated_by(lanes, &q, c)) << (c * SCAN % 64);
        }
        bits
    }

    /// Moves row `k` to the front, the rows before it one place back.
    #[inline]
    pub(crate) fn move_to_front(&mut self, k: usize) {
        for j in 0..D {
            self.buf[j * self.cap..][..=k].rotate_right(1);
        }
    }

    /// Drops the rows that `p` dominates, keeping the others' order, and the entries of
    /// `ids` (one per row) along with them.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    pub(crate) fn drop_dominated_by<L: Lanes>(
        &mut self,
        lanes: L,
        p: &[f64; D],
        ids: &mut Vec<u32>,
    ) {
        debug_assert_eq!(ids.len(), self.len);
        // Rows move only to places already looked at, so each chunk's test still sees it
        // as it was. Usually nothing is dropped, and nothing is written.
        let q = lanes.splat_row(p);
        let mut kept = 0;
        let mut moving = false;
        for c in 0..self.len.div_ceil(SCAN) {
            let m = self.chunk_dominated_by(lanes, &q, c);
            let rows = (self.len - c * SCAN).min(SCAN);
            if m == 0 && !moving {
                kept += rows;
                continue;
            }
            moving = true;
            for k in 0..rows {
                if m >> k & 1 == 0 {
                    let i = c * SCAN + k;
                    for j in 0..D {
                        self.buf[j * self.cap + kept] = self.buf[j * self.cap + i];
                    }
                    ids[kept] = ids[i];
                    kept += 1;
                }
            }
        }
        for j in 0..D {
            self.buf[j * self.cap + kept..][..self.len - kept].fill(f64::NEG_INFINITY);
        }
        self.len = kept;
        ids.truncate(kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::kd::dom;
    use crate::front::simd::Portable;

    #[test]
    fn finds_the_first_dominator_across_chunks_and_keeps_order() {
        // 40 rows (three chunks, the last one padded): row i is (i, -i, 0); none dominates
        // another. A query dominated by rows 33 and 35 only, and one equal to row 20 (equal
        // rows pass the first test and must not count).
        let rows: Vec<[f64; 3]> = (0..40)
            .map(|i| [f64::from(i), -f64::from(i), 0.0])
            .collect();
        let mut w = Window::from_rows(&rows, 0);
        assert_eq!(w.len(), 40);
        assert!(w.has_room(), "40 rows take three chunks");
        let mut g = Window::<3>::with_capacity(1);
        for p in &rows {
            g.push(p);
        }
        assert_eq!((0..40).map(|i| g.row(i)).collect::<Vec<_>>(), rows);
        assert_eq!(g.first_dominator(Portable, &[33.0, -35.0, -1.0]), Some(33));
        assert_eq!(w.first_dominator(Portable, &[33.0, -35.0, -1.0]), Some(33));
        assert_eq!(w.first_dominator(Portable, &[20.0, -20.0, 0.0]), None);
        assert_eq!(
            w.first_dominator(Portable, &[f64::NEG_INFINITY; 3]),
            Some(0)
        );
        w.move_to_front(35);
        assert_eq!(w.row(0), rows[35]);
        assert_eq!(w.row(1), rows[0]);
        assert_eq!(w.row(35), rows[34]);
        assert_eq!(w.row(36), rows[36]);
        assert_eq!(w.first_dominator(Portable, &[33.0, -35.0, -1.0]), Some(0));
        // (30, -25, 1) dominates rows 25..=30.
        let mut w = Window::from_rows(&rows, 0);
        let mut ids: Vec<u32> = (0..40).collect();
        w.drop_dominated_by(Portable, &[30.0, -25.0, 1.0], &mut ids);
        assert_eq!(
            ids,
            [(0..25).collect::<Vec<_>>(), (31..40).collect()].concat()
        );
        assert_eq!(w.len(), 34);
        assert_eq!(w.row(25), rows[31]);
        assert_eq!(w.row(34), [f64::NEG_INFINITY; 3]);
        assert!(w.has_room());
        // The bit set of the rows a row dominates; 34 rows, so the last chunk is mostly
        // padding, which must not show.
        let bits = w.dominated_by(Portable, &[35.0, -20.0, 0.0]);
        let rows: Vec<usize> = (0..w.len())
            .filter(|&i| bits[i / 64] >> (i % 64) & 1 == 1)
            .collect();
        let want: Vec<usize> = (0..w.len())
            .filter(|&i| dom(&[35.0, -20.0, 0.0], &w.row(i)))
            .collect();
        assert_eq!(rows, want);
        assert!(want.len() > 5);
        assert_eq!(bits.len(), 1);
        assert_eq!(
            w.dominated_by(Portable, &[100.0, 0.0, 1.0])[0],
            (1 << 34) - 1
        );
    }
}
