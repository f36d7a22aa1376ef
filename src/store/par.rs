//! Compile-time parallelism (native only; one thread in wasm): independent
//! pieces of work shared out among threads, results in input order, so the
//! output never depends on the number of threads.

/// Threads for compile work: `GRAMMASK_THREADS` if set, else the machine's
/// parallelism (at most 8); 1 in wasm.
pub(crate) fn threads() -> usize {
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        match std::env::var("GRAMMASK_THREADS").ok().and_then(|v| v.parse::<usize>().ok()) {
            Some(n) => n.clamp(1, 64),
            None => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        }
    }
}

/// `f(&mut state, i)` for every `i` in `0..n`, in order of `i` in the
/// result; each thread makes its own `state` with `init` (caches that are
/// not shared). Items are handed out one by one from a shared counter.
pub(crate) fn map<S, R: Send>(n: usize, init: impl Fn() -> S + Sync, f: impl Fn(&mut S, usize) -> R + Sync) -> Vec<R> {
    map_with_progress(n, init, f, &mut |_| {})
}

/// [`map`], calling `progress(items done)` from the calling thread now and
/// then (after every item on one thread, every 20 ms otherwise).
pub(crate) fn map_with_progress<S, R: Send>(
    n: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize) -> R + Sync,
    progress: &mut dyn FnMut(usize),
) -> Vec<R> {
    let k = threads().min(n);
    if k <= 1 {
        let mut s = init();
        return (0..n)
            .map(|i| {
                let r = f(&mut s, i);
                progress(i + 1);
                r
            })
            .collect();
    }
    map_threads(k, n, &init, &f, progress)
}

#[cfg(target_arch = "wasm32")]
fn map_threads<S, R: Send>(
    _: usize,
    _: usize,
    _: &(impl Fn() -> S + Sync),
    _: &(impl Fn(&mut S, usize) -> R + Sync),
    _: &mut dyn FnMut(usize),
) -> Vec<R> {
    unreachable!("one thread in wasm")
}

#[cfg(not(target_arch = "wasm32"))]
fn map_threads<S, R: Send>(
    k: usize,
    n: usize,
    init: &(impl Fn() -> S + Sync),
    f: &(impl Fn(&mut S, usize) -> R + Sync),
    progress: &mut dyn FnMut(usize),
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (next, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut parts: Vec<Vec<(usize, R)>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..k)
            .map(|_| {
                sc.spawn(|| {
                    let mut s = init();
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            return out;
                        }
                        out.push((i, f(&mut s, i)));
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while hs.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(std::time::Duration::from_millis(20));
            progress(done.load(Ordering::Relaxed));
        }
        hs.into_iter().map(|h| h.join().expect("compile thread")).collect()
    });
    let mut all: Vec<(usize, R)> = parts.iter_mut().flat_map(std::mem::take).collect();
    all.sort_unstable_by_key(|p| p.0);
    all.into_iter().map(|p| p.1).collect()
}
