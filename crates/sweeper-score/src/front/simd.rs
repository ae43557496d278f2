//! Runtime choice of the widest vector instructions this CPU has, for the pass's hot loop.
//!
//! The hot loop (`prune::filter`) is written as plain, branch-free Rust that the compiler
//! vectorizes across rows. Built for the baseline x86-64 target it only gets SSE2 (two
//! `f64` lanes); the same source compiled inside a function carrying
//! `#[target_feature(enable = "avx2")]` or `"avx512f"` gets four or eight lanes. On the
//! project's machine (Sapphire Rapids) the bit mask of 1e6 rows × 4 columns tested against
//! one row took 5.3 ms with the baseline build, 1.6 ms with AVX2 and 1.2 ms with AVX-512.
//!
//! This is the only `unsafe` in the workspace: calling a `#[target_feature]` function is
//! `unsafe` because running it on a CPU without the feature is undefined behaviour. Each
//! call below is guarded by `is_x86_feature_detected!` for exactly the features that the
//! called function enables, which is the whole safety argument (the pattern of `memchr` and
//! `simdutf8`'s runtime dispatch).

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

/// Defines `fn $name<const D: usize>(level: SimdLevel, args) -> R` that calls
/// `$body::<D>(args)` built for `level`, or for the widest level this CPU has if that is
/// lower. `$body` must be `#[inline(always)]`, so that the compiler
/// builds it again inside each wrapper below with that wrapper's features (a closure would
/// not do: it is compiled once, for the baseline, and may stay a call).
macro_rules! multiversion {
    ($(#[$m:meta])* $vis:vis fn $name:ident<const D: usize>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
        => $body:ident;) => {
        $(#[$m])*
        $vis fn $name<const D: usize>(level: $crate::front::SimdLevel, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,bmi1,bmi2,popcnt")]
                fn v4<const D: usize>($($arg: $ty),*) -> $ret {
                    $body::<D>($($arg),*)
                }
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,popcnt")]
                fn v3<const D: usize>($($arg: $ty),*) -> $ret {
                    $body::<D>($($arg),*)
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
            $body::<D>($($arg),*)
        }
    };
}
pub(crate) use multiversion;
