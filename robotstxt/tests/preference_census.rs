//! How many of ../shared/realworld/robots' files carry `Content-Signal` and
//! `Content-Usage` lines, and their most common values, as the parser reads
//! them (the figures in the README); checked against a plain line scan.

use robotsieve_robotstxt::parse::{Field, RobotsTxt};
use robotsieve_testkit::shared_dir;
use std::collections::BTreeMap;

#[test]
fn census_of_the_real_corpus() {
    let Some(dir) = shared_dir().map(|d| d.join("realworld/robots")).filter(|d| d.is_dir()) else {
        eprintln!("skipped: ../shared/realworld/robots is absent");
        return;
    };
    let mut files = 0;
    let mut carrying: BTreeMap<&str, usize> = BTreeMap::new();
    let mut scanned: BTreeMap<&str, usize> = BTreeMap::new();
    let mut values: BTreeMap<(&str, String), usize> = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "txt") {
            continue;
        }
        files += 1;
        let body = std::fs::read(&path).unwrap();
        let robots = RobotsTxt::parse(&body);
        for (name, field) in [("content-signal", Field::ContentSignal), ("content-usage", Field::ContentUsage)] {
            let lines: Vec<_> = robots.directives().filter(|(_, d)| d.field == field).collect();
            if !lines.is_empty() {
                *carrying.entry(name).or_default() += 1;
            }
            for (_, d) in lines {
                *values.entry((name, String::from_utf8_lossy(d.value).into_owned())).or_default() += 1;
            }
            // The plain scan: a line whose text before the first colon, trimmed, is the name.
            let cut = &body[..body.len().min(robotsieve_robotstxt::parse::MAX_BODY_BYTES)];
            let found = cut.split(|&b| b == b'\n' || b == b'\r').any(|line| {
                let key = line.split(|&b| b == b':').next().unwrap_or_default();
                line.contains(&b':') && key.trim_ascii().eq_ignore_ascii_case(name.as_bytes()) && !key.contains(&b'#')
            });
            if found {
                *scanned.entry(name).or_default() += 1;
            }
        }
    }
    assert!(files > 30_000, "{files} files");
    assert_eq!(carrying, scanned, "parser and line scan disagree");
    let mut top: Vec<_> = values.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    eprintln!("{files} files; carrying: {carrying:?}");
    for ((name, value), n) in top.iter().take(10) {
        eprintln!("  {n:>6}  {name}: {value}");
    }
}
