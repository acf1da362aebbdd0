//! Scan cost of the dense and the comb ("row-displaced") form of the same
//! automaton, on one robots.txt file's googlebot group, with paths made from
//! the file's own rules (each rule, the rule plus a suffix, the rule cut short).
//!
//! `cargo run --release -p robotsieve-compiler --example comb_scan -- FILE`
//! (for instance ../shared/realworld/robots/www.caltech.edu.txt, whose long
//! literal rules make a trie-like automaton).

use robotsieve_compiler::automaton::{compile, BuildOptions};
use robotsieve_engine::CombDfa;
use robotsieve_engine::Part;
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let file = std::env::args().nth(1).expect("usage: comb_scan FILE");
    let body = std::fs::read(&file).expect("readable file");
    let group = Group::select(&RobotsTxt::parse(&body), &Agent::parse("googlebot").expect("valid token"));
    let compiled = compile(&group, &BuildOptions::default());
    let mut paths: Vec<Vec<u8>> = Vec::new();
    for rule in &group.rules {
        let p = rule.pattern.iter().copied().filter(|&b| b != b'*' && b != b'$').collect::<Vec<u8>>();
        paths.push(p.clone());
        paths.push([p.as_slice(), b"/2024/05/some-article?id=1"].concat());
        paths.push(p[..p.len() / 2].to_vec());
    }
    let bytes: usize = paths.iter().map(Vec::len).sum();
    println!(
        "{file}: {} rules, {} paths, {:.1} bytes/path",
        group.rules.len(),
        paths.len(),
        bytes as f64 / paths.len() as f64
    );
    for (i, part) in compiled.matcher.parts().iter().enumerate() {
        let Part::Dfa(dense) = part else { continue };
        let started = Instant::now();
        let comb = CombDfa::from_dense(dense);
        let packed = started.elapsed();
        let (d, c) = (dense.as_ref(), comb.as_ref());
        let dense_bytes = dense.transitions().len() * if dense.fits_u16() { 2 } else { 4 };
        println!(
            "part {i}: {} states, dense transitions {dense_bytes} bytes, comb tables {} bytes ({} slots), packed in {packed:?}",
            d.states(),
            comb.stored_bytes(),
            comb.slots().len()
        );
        assert!(paths.iter().all(|p| d.scan(p) == c.scan(p)), "comb and dense disagree");
        let rounds = (5_000_000 / paths.len()).max(1);
        let time = |scan: &dyn Fn(&[u8]) -> u32| {
            let started = Instant::now();
            let mut sum = 0u64;
            for _ in 0..rounds {
                for p in &paths {
                    sum += u64::from(scan(black_box(p)));
                }
            }
            black_box(sum);
            started.elapsed().as_nanos() as f64 / (rounds * paths.len()) as f64
        };
        // Alternate twice to even out warm-up and frequency changes.
        let (d1, c1, d2, c2) = (time(&|p| d.scan(p)), time(&|p| c.scan(p)), time(&|p| d.scan(p)), time(&|p| c.scan(p)));
        println!("  ns/path: dense {:.1} {:.1}, comb {:.1} {:.1}", d1, d2, c1, c2);
    }
}
