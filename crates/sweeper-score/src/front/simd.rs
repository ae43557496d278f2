//! Runtime choice of the widest vector instructions this CPU has, for the pass's hot loop.
//!
//! The hot loop (`prune::filter`) is written as plain, branch-free Rust that the compiler
//! vectorizes across rows. Built for the baseline x86-64 target it only gets SSE2 (two
//! `f64` lanes); the same source compiled inside a function carrying
//! `#[target_feature(enable = "avx2")]` or `"avx512f"` gets four or eight lanes. On the
//! project's machine (Sapphire Rapids) the bit mask of 1e6 rows × 4 columns tested against
//! one row took 5.3 ms with the baseline build, 1.6 ms with AVX2 and 1.2 ms with AVX-512.
//!
//! The window's 16-row compares are the exception: written portably, the compiler split
//! them into uneven vectors and packed the results with shuffles, so at the AVX-512 level
//! they are written with `std::arch` ([`Lanes`], [`Avx512`]).
//!
//! This module holds the only `unsafe` in the workspace. Calling a `#[target_feature]`
//! function is `unsafe` because running it on a CPU without the feature is undefined
//! behaviour. Each call below is guarded by `is_x86_feature_detected!` for exactly the
//! features that the called function enables, which is the whole safety argument (the
//! pattern of `memchr` and `simdutf8`'s runtime dispatch); the [`Avx512`] token carries
//! that proof into the window's compares, and two vector loads read inside a borrowed
//! array.

use std::sync::atomic::{AtomicU8, Ordering};

/// The vector instruction set of the front kernels' hot loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SimdLevel {
    /// The build's baseline target (SSE2 on x86-64).
    Baseline,
    /// AVX2 and FMA (x86-64-v3).
    Avx2,
    /// AVX-512 F/VL/DQ/BW (x86-64-v4).
    Avx512,
}

impl SimdLevel {
    /// Every level, narrowest first.
    pub const ALL: [Self; 3] = [Self::Baseline, Self::Avx2, Self::Avx512];

    /// Its name: `baseline`, `avx2` or `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Baseline => "baseline",
            Self::Avx2 => "avx2",
            Self::Avx512 => "avx512",
        }
    }

    /// The level of a name given by [`SimdLevel::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// The cap set by [`limit_simd`], as `SimdLevel as u8`.
static CAP: AtomicU8 = AtomicU8::new(SimdLevel::Avx512 as u8);

/// Caps the instruction set the front kernels use, process-wide (the result never depends
/// on it; the tests run every level, and benchmarks compare them). Returns the level in use
/// afterwards: the lower of `max` and what this CPU has.
pub fn limit_simd(max: SimdLevel) -> SimdLevel {
    CAP.store(max as u8, Ordering::Relaxed);
    simd_level()
}

/// The instruction set the front kernels use: the widest this CPU has, within
/// [`limit_simd`]'s cap.
pub fn simd_level() -> SimdLevel {
    let cap = match CAP.load(Ordering::Relaxed) {
        0 => SimdLevel::Baseline,
        1 => SimdLevel::Avx2,
        _ => SimdLevel::Avx512,
    };
    detected().min(cap)
}

/// The widest level this CPU supports (`is_x86_feature_detected!` caches its answers).
pub(crate) fn detected() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    {
        let v3 = std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("popcnt");
        if v3
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512bw")
        {
            return SimdLevel::Avx512;
        }
        if v3 {
            return SimdLevel::Avx2;
        }
    }
    SimdLevel::Baseline
}

/// The compares of 16 window rows (held column by column) against one row, per level. The
/// row comes as [`Lanes::splat`]s of its values, made once per row: broadcast from the
/// stored row in every compare, the reload was the small-input loop's hottest spot in perf
/// (17% of uniform 1e3 × 3; a store-to-load forward that failed, by the look of it).
pub(crate) trait Lanes: Copy {
    /// One value of the row, ready to compare against 16 rows.
    type Splat: Copy;
    /// `x` ready to compare.
    fn splat(self, x: f64) -> Self::Splat;
    /// Every value of `p` ready to compare.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    fn splat_row<const D: usize>(self, p: &[f64; D]) -> [Self::Splat; D] {
        std::array::from_fn(|j| self.splat(p[j]))
    }
    /// Bit `k` set when row `k` is at least `p` in every column.
    fn ge_all<const D: usize>(self, cols: [&[f64; 16]; D], p: &[Self::Splat; D]) -> u32;
    /// Bit `k` set when `p` dominates row `k`: at least as large everywhere, larger in one.
    fn dominated<const D: usize>(self, cols: [&[f64; 16]; D], p: &[Self::Splat; D]) -> u32;
}

/// The compares in plain Rust, for the levels below AVX-512.
#[derive(Clone, Copy)]
pub(crate) struct Portable;

impl Lanes for Portable {
    type Splat = f64;

    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    fn splat(self, x: f64) -> f64 {
        x
    }

    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    fn ge_all<const D: usize>(self, cols: [&[f64; 16]; D], p: &[f64; D]) -> u32 {
        let mut ge = [true; 16];
        for j in 0..D {
            for k in 0..16 {
                ge[k] &= cols[j][k] >= p[j];
            }
        }
        let mut m = 0u32;
        for (k, &g) in ge.iter().enumerate() {
            m |= u32::from(g) << k;
        }
        m
    }

    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "built inside `multiversion!` wrappers"
    )]
    fn dominated<const D: usize>(self, cols: [&[f64; 16]; D], p: &[f64; D]) -> u32 {
        let mut ge = [true; 16];
        let mut gt = [false; 16];
        for j in 0..D {
            for k in 0..16 {
                ge[k] &= p[j] >= cols[j][k];
                gt[k] |= p[j] > cols[j][k];
            }
        }
        let mut m = 0u32;
        for k in 0..16 {
            m |= u32::from(ge[k] & gt[k]) << k;
        }
        m
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::Avx512;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m512d, _CMP_GE_OQ, _CMP_LE_OQ, _CMP_LT_OQ, _mm512_loadu_pd, _mm512_mask_cmp_pd_mask,
        _mm512_set1_pd,
    };

    use super::Lanes;

    /// Proof that this CPU has AVX-512 F: one exists only where [`Avx512::new`] ran, and
    /// that is callable only from code built for those features, which `multiversion!`
    /// runs only after detecting them. The compares (two per column for "at least as
    /// large", four for "dominated") leave 16 rows' bits straight in mask registers
    /// (`kmov`), with no packing.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx512(());

    impl Avx512 {
        /// The token, from code built with (and so running under) AVX-512.
        #[target_feature(enable = "avx512f")]
        pub(crate) fn new() -> Self {
            Avx512(())
        }
    }

    /// Columns `j` of rows 0..8 and 8..16.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn halves(col: &[f64; 16]) -> (__m512d, __m512d) {
        let p = col.as_ptr();
        // SAFETY: each load reads 8 `f64` inside the 16 that `col` borrows (offsets 0 and
        // 8); the unaligned loads need no alignment.
        #[expect(unsafe_code, reason = "vector loads from a borrowed array")]
        unsafe {
            (_mm512_loadu_pd(p), _mm512_loadu_pd(p.add(8)))
        }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn ge_all<const D: usize>(cols: [&[f64; 16]; D], p: &[__m512d; D]) -> u32 {
        let (mut lo, mut hi) = (0xff_u8, 0xff_u8);
        for j in 0..D {
            let x = p[j];
            let (a, b) = halves(cols[j]);
            lo = _mm512_mask_cmp_pd_mask::<_CMP_GE_OQ>(lo, a, x);
            hi = _mm512_mask_cmp_pd_mask::<_CMP_GE_OQ>(hi, b, x);
        }
        u32::from(lo) | u32::from(hi) << 8
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn dominated<const D: usize>(cols: [&[f64; 16]; D], p: &[__m512d; D]) -> u32 {
        let (mut lo, mut hi) = (0xff_u8, 0xff_u8);
        let (mut lo_gt, mut hi_gt) = (0_u8, 0_u8);
        for j in 0..D {
            let x = p[j];
            let (a, b) = halves(cols[j]);
            lo = _mm512_mask_cmp_pd_mask::<_CMP_LE_OQ>(lo, a, x);
            hi = _mm512_mask_cmp_pd_mask::<_CMP_LE_OQ>(hi, b, x);
            lo_gt |= _mm512_mask_cmp_pd_mask::<_CMP_LT_OQ>(0xff, a, x);
            hi_gt |= _mm512_mask_cmp_pd_mask::<_CMP_LT_OQ>(0xff, b, x);
        }
        u32::from(lo & lo_gt) | u32::from(hi & hi_gt) << 8
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn splat(x: f64) -> __m512d {
        _mm512_set1_pd(x)
    }

    impl Lanes for Avx512 {
        type Splat = __m512d;

        #[inline(always)]
        #[allow(
            clippy::inline_always,
            reason = "built inside `multiversion!` wrappers"
        )]
        fn splat(self, x: f64) -> __m512d {
            // SAFETY: `self` proves that this CPU has AVX-512 F (see `Avx512`).
            #[expect(unsafe_code, reason = "runtime-detected target features")]
            unsafe {
                splat(x)
            }
        }

        #[inline(always)]
        #[allow(
            clippy::inline_always,
            reason = "built inside `multiversion!` wrappers"
        )]
        fn ge_all<const D: usize>(self, cols: [&[f64; 16]; D], p: &[__m512d; D]) -> u32 {
            // SAFETY: `self` proves that this CPU has AVX-512 F (see `Avx512`).
            #[expect(unsafe_code, reason = "runtime-detected target features")]
            unsafe {
                ge_all(cols, p)
            }
        }

        #[inline(always)]
        #[allow(
            clippy::inline_always,
            reason = "built inside `multiversion!` wrappers"
        )]
        fn dominated<const D: usize>(self, cols: [&[f64; 16]; D], p: &[__m512d; D]) -> u32 {
            // SAFETY: `self` proves that this CPU has AVX-512 F (see `Avx512`).
            #[expect(unsafe_code, reason = "runtime-detected target features")]
            unsafe {
                dominated(cols, p)
            }
        }
    }
}

/// Defines `fn $name<const D: usize>(level: SimdLevel, args) -> R` that calls
/// `$body::<D, _>(lanes, args)` built for `level`, or for the widest level this CPU has if
/// that is lower, with the [`Lanes`] of that level. `$body` must be `#[inline(always)]`,
/// so that the compiler builds it again inside each wrapper below with that wrapper's
/// features (a closure would not do: it is compiled once, for the baseline, and may stay
/// a call).
macro_rules! multiversion {
    ($(#[$m:meta])* $vis:vis fn $name:ident<const D: usize>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
        => $body:ident;) => {
        $(#[$m])*
        $vis fn $name<const D: usize>(level: $crate::front::SimdLevel, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,bmi1,bmi2,popcnt")]
                fn v4<const D: usize>($($arg: $ty),*) -> $ret {
                    $body::<D, _>($crate::front::simd::Avx512::new(), $($arg),*)
                }
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,popcnt")]
                fn v3<const D: usize>($($arg: $ty),*) -> $ret {
                    $body::<D, _>($crate::front::simd::Portable, $($arg),*)
                }
                match level.min($crate::front::simd::detected()) {
                    // SAFETY: `detected()` returns `Avx512` only when it found every
                    // feature that `v4` enables.
                    $crate::front::SimdLevel::Avx512 => {
                        #[expect(unsafe_code, reason = "runtime-detected target features")]
                        return unsafe { v4::<D>($($arg),*) };
                    }
                    // SAFETY: `detected()` returns `Avx2` or `Avx512` only when it found
                    // every feature that `v3` enables.
                    $crate::front::SimdLevel::Avx2 => {
                        #[expect(unsafe_code, reason = "runtime-detected target features")]
                        return unsafe { v3::<D>($($arg),*) };
                    }
                    $crate::front::SimdLevel::Baseline => {}
                }
            }
            let _ = level;
            $body::<D, _>($crate::front::simd::Portable, $($arg),*)
        }
    };
}
pub(crate) use multiversion;

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 rows × D columns of values drawn from a few, with `±0.0`, `±inf` and NaN among
    /// them, so that ties, signed zeros and unordered compares are common.
    fn chunk<const D: usize>(next: &mut impl FnMut() -> u64) -> [[f64; 16]; D] {
        const VALUES: [f64; 8] = [
            -1.0,
            -0.0,
            0.0,
            0.5,
            1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        std::array::from_fn(|_| std::array::from_fn(|_| VALUES[(next() % 8) as usize]))
    }

    /// The bits by the definitions, one row at a time.
    fn want<const D: usize>(cols: &[[f64; 16]; D], p: &[f64; D]) -> (u32, u32) {
        let (mut ge, mut dom) = (0, 0);
        let rows = (0..16).map(|k| -> [f64; D] { std::array::from_fn(|j| cols[j][k]) });
        for (k, row) in rows.enumerate() {
            if row.iter().zip(p).all(|(w, x)| w >= x) {
                ge |= 1 << k;
            }
            if row.iter().zip(p).all(|(w, x)| x >= w) && row.iter().zip(p).any(|(w, x)| x > w) {
                dom |= 1 << k;
            }
        }
        (ge, dom)
    }

    fn check<const D: usize, L: Lanes>(lanes: L, next: &mut impl FnMut() -> u64) -> u32 {
        let mut seen = 0;
        for _ in 0..2000 {
            let cols = chunk::<D>(next);
            // The query is a row of the chunk now and then, so that equal rows come up.
            let p: [f64; D] = if next().is_multiple_of(4) {
                let k = (next() % 16) as usize;
                std::array::from_fn(|j| cols[j][k])
            } else {
                chunk::<D>(next).map(|c| c[0])
            };
            let refs: [&[f64; 16]; D] = std::array::from_fn(|j| &cols[j]);
            let q = lanes.splat_row(&p);
            let (ge, dom) = want(&cols, &p);
            assert_eq!(
                lanes.ge_all(refs, &q),
                ge,
                "ge_all, d = {D}, {cols:?} against {p:?}"
            );
            assert_eq!(
                lanes.dominated(refs, &q),
                dom,
                "dominated, d = {D}, {cols:?} against {p:?}"
            );
            seen |= u32::from(ge != 0) | u32::from(dom != 0) << 1;
        }
        seen
    }

    fn check_all<L: Lanes>(lanes: L) {
        let mut next = crate::front::xorshift(0x9e37_79b9_7f4a_7c15);
        // Both kinds of bits must come up, or the test would pass on constant answers.
        assert_eq!(check::<1, L>(lanes, &mut next), 3);
        assert_eq!(check::<2, L>(lanes, &mut next), 3);
        assert_eq!(check::<3, L>(lanes, &mut next), 3);
        assert_eq!(check::<4, L>(lanes, &mut next), 3);
        assert_eq!(check::<5, L>(lanes, &mut next), 3);
    }

    #[test]
    fn portable_lanes_follow_the_definitions() {
        check_all(Portable);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx512_lanes_follow_the_definitions() {
        // Without AVX-512 there is nothing to run (the project's machines have it).
        if detected() < SimdLevel::Avx512 {
            return;
        }
        // SAFETY: `detected()` found every feature that `new` enables.
        #[expect(unsafe_code, reason = "runtime-detected target features")]
        let lanes = unsafe { Avx512::new() };
        check_all(lanes);
    }
}
