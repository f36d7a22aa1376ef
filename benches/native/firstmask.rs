//! Per-request first mask, split by phase: JSON Schema → grammar (front end),
//! LALR(1) tables, terminal tables, the rest of the lexer automaton, the lazy
//! store, the first mask.
//! Each schema is compiled R times in one process (the first time with the
//! terminal-table cache as the schemas before it left it); the first run's
//! phases are printed, and the fastest run's total (`best`).
//! Times are this thread's CPU time (the terminal tables: their share of the
//! lexer build's wall time, applied to its CPU time).
//! `cargo run --release --example firstmask -- TOKENIZER.json SCHEMA_DIR [R]`
use grammask::constraint::{to_cfg, Constraint, ConstraintOptions};
use grammask::matcher::Matcher;
use grammask::vocab::PreparedVocab;
use std::rc::Rc;

/// This thread's CPU time (the machine is shared: wall time would count
/// other processes' turns).
#[derive(Clone, Copy)]
struct Instant(f64);
impl Instant {
    fn now() -> Instant {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        Instant(t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
    }
}
impl std::ops::Sub for Instant {
    type Output = std::time::Duration;
    fn sub(self, o: Instant) -> std::time::Duration {
        std::time::Duration::from_secs_f64((self.0 - o.0).max(0.0))
    }
}
fn main() {
    let mut a = std::env::args().skip(1);
    let tok = a.next().expect("TOKENIZER.json SCHEMA_DIR [R]");
    let dir = a.next().expect("TOKENIZER.json SCHEMA_DIR [R]");
    let runs: usize = a.next().map_or(3, |s| s.parse().unwrap());
    let vocab = grammask::vocab::load::load_tokenizer_file(std::path::Path::new(&tok), None).unwrap();
    let pv = Rc::new(PreparedVocab::new(vocab));
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let o = ConstraintOptions::default();
    let mut tot = [0f64; 7];
    let mut firsts = Vec::new();
    println!("{:<44} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}", "schema (ms)", "first(1)", "front", "lalr", "terms", "lexer", "store", "mask", "best");
    for f in &files {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        let mut best = [f64::MAX; 7];
        let mut first_run = 0.0;
        let mut first_ph = [0f64; 6];
        let mut failed = None;
        for r in 0..runs {
            let t0 = Instant::now();
            let cfg = match to_cfg(&Constraint::JsonSchema(v.clone()), &o) {
                Ok((c, _)) => c,
                Err(e) => {
                    failed = Some(e.to_string());
                    break;
                }
            };
            let t1 = Instant::now();
            let built = grammask::parser::lalr::build_tables(&cfg).and_then(|lr| {
                let t2 = Instant::now();
                let w = std::time::Instant::now();
                grammask::lexer::build_for(&cfg, Some(&lr)).map(|(lx, st)| (lr, t2, lx, st, w.elapsed()))
            });
            let (lr, t2, lexer, stats, lex_wall) = match built {
                Ok(x) => x,
                Err(e) => {
                    failed = Some(e.to_string());
                    break;
                }
            };
            let t3 = Instant::now();
            let store = Rc::new(grammask::store::build::compile_lazy_from(&cfg, lr, lexer, pv.clone()).unwrap());
            let t4 = Instant::now();
            let m = Matcher::new(store.clone());
            let mut mask = vec![0u32; store.mask_words()];
            m.fill_mask(&mut mask).unwrap();
            let t5 = Instant::now();
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            // The terminal tables' share of the lexer build (timed in wall time inside).
            let terms = ms(t3 - t2) * stats.terminal_elapsed.as_secs_f64() / lex_wall.as_secs_f64().max(1e-9);
            let ph = [ms(t1 - t0), ms(t2 - t1), terms, ms(t3 - t2) - terms, ms(t4 - t3), ms(t5 - t4)];
            let whole = ms(t5 - t0);
            if r == 0 {
                first_run = whole;
                first_ph = ph;
            }
            for k in 0..6 {
                best[k] = best[k].min(ph[k]);
            }
            best[6] = best[6].min(whole);
        }
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if let Some(e) = failed {
            println!("{name:<44} failed: {}", e.chars().take(80).collect::<String>());
            continue;
        }
        println!(
            "{:<44} {:>9.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9.2}",
            name.chars().take(44).collect::<String>(), first_run, first_ph[0], first_ph[1], first_ph[2], first_ph[3], first_ph[4], first_ph[5], best[6]
        );
        for k in 0..6 {
            tot[k] += first_ph[k];
        }
        tot[6] += best[6];
        firsts.push(first_run);
    }
    firsts.sort_by(f64::total_cmp);
    let p = |q: f64| if firsts.is_empty() { 0.0 } else { firsts[((firsts.len() - 1) as f64 * q).round() as usize] };
    println!(
        "sum of first runs (ms): front {:.1} lalr {:.1} terms {:.1} lexer {:.1} store {:.1} mask {:.1}, best runs {:.1}; first run: p50 {:.2} p90 {:.2} p99 {:.2} max {:.2}",
        tot[0], tot[1], tot[2], tot[3], tot[4], tot[5], tot[6], p(0.5), p(0.9), p(0.99), p(1.0)
    );
}
