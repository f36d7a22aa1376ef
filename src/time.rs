//! A monotonic clock that also works on wasm32-unknown-unknown.
//!
//! `std::time::Instant::now()` panics on wasm32-unknown-unknown (the target
//! has no clock), and the compiler measures its phases for progress reports.
//! Natively this is `std::time::Instant`; on wasm32 it reads `Date.now()`
//! through js-sys when the `wasm` feature is on, and otherwise reports zero
//! elapsed time. Only `now()` and `elapsed()` are offered: that is all the
//! compiler uses.

#[cfg(not(target_arch = "wasm32"))]
pub use std::time::Instant;

#[cfg(target_arch = "wasm32")]
pub use self::wasm_clock::Instant;

#[cfg(target_arch = "wasm32")]
mod wasm_clock {
    use std::time::Duration;

    /// Milliseconds since an arbitrary origin.
    #[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
    pub struct Instant(f64);

    fn now_ms() -> f64 {
        #[cfg(feature = "wasm")]
        {
            js_sys::Date::now()
        }
        #[cfg(not(feature = "wasm"))]
        {
            0.0
        }
    }

    impl Instant {
        pub fn now() -> Instant {
            Instant(now_ms())
        }
        pub fn elapsed(&self) -> Duration {
            let ms = (now_ms() - self.0).max(0.0);
            Duration::from_micros((ms * 1000.0) as u64)
        }
    }
}
