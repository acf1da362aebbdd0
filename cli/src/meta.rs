//! `robotsieve meta`: page-level rules (robots meta tags and `X-Robots-Tag`
//! headers) of fetched pages for one crawler, and what decided them.

use crate::failure::{fail, Context, Failure};
use crate::input::read_all;
use robotsieve_compiler::page::{Field, PageRules, Statement};
use robotsieve_compiler::Agent;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `robotsieve meta`.
#[derive(clap::Args)]
pub struct Args {
    /// The crawler: its product tokens, comma-separated (`googlebot-news,googlebot`).
    /// Tags named `robots` and tags named after any of the tokens apply.
    #[arg(long, value_name = "TOKEN[,TOKEN...]")]
    agent: String,
    /// A response header of the page, `Name: value` (repeatable). Only
    /// `X-Robots-Tag` headers are read: `--header "X-Robots-Tag: googlebot: noindex"`.
    #[arg(long, value_name = "NAME: VALUE")]
    header: Vec<String>,
    /// One JSON object per page instead of a line of `field=value`.
    #[arg(long)]
    json: bool,
    /// HTML pages to read (`-` for standard input). Only the head is read.
    #[arg(required = true)]
    pages: Vec<PathBuf>,
}

/// Runs `meta`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let agent = Agent::parse(&args.agent).map_err(|e| fail!("--agent: {e}"))?;
    let headers = parse_headers(&args.header)?;
    let header_refs: Vec<(&[u8], &[u8])> = headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())).collect();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for path in &args.pages {
        let html = read_all(path)?;
        let rules = PageRules::evaluate(&agent, &html, &header_refs);
        let page = path.display();
        for (statement, directive) in rules.problems() {
            eprintln!("robotsieve: warning: {page}: {}: {directive}", statement.origin);
        }
        let written = if args.json {
            let mut object = rules_json(&rules);
            object["page"] = serde_json::json!(page.to_string());
            writeln!(out, "{object}")
        } else if args.pages.len() > 1 {
            writeln!(out, "{page}\t{rules} (source: {})", sources_text(&rules))
        } else {
            writeln!(out, "{rules} (source: {})", sources_text(&rules))
        };
        written.context("standard output")?;
    }
    out.flush().context("standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// Splits each `--header` at its first colon into name and value.
fn parse_headers(headers: &[String]) -> Result<Vec<(String, String)>, Failure> {
    headers
        .iter()
        .map(|h| match h.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_string(), value.trim().to_string())),
            _ => Err(fail!("--header {h:?}: expected `Name: value`, e.g. \"X-Robots-Tag: noindex\"")),
        })
        .collect()
}

/// The statements that decided something, each with the fields it decided:
/// `line 12 <meta name="googlebot">: index, archive; header 1 X-Robots-Tag: follow`,
/// or `defaults` when nothing did.
fn sources_text(rules: &PageRules) -> String {
    let mut parts: Vec<(&Statement, Vec<&str>)> = Vec::new();
    for field in Field::ALL {
        if let Some(statement) = rules.decided_by(field) {
            match parts.iter_mut().find(|(s, _)| std::ptr::eq(*s, statement)) {
                Some((_, fields)) => fields.push(field.name()),
                None => parts.push((statement, vec![field.name()])),
            }
        }
    }
    if parts.is_empty() {
        return "defaults".to_string();
    }
    parts.iter().map(|(s, fields)| format!("{}: {}", s.origin, fields.join(", "))).collect::<Vec<_>>().join("; ")
}

/// The rules as a JSON object: the booleans, the limits (`-1` for none,
/// `null` for an unset image preview or no `unavailable_after`), the
/// statements read with the fields each decided, and the problems.
fn rules_json(rules: &PageRules) -> serde_json::Value {
    let limit = |l: Option<u64>| l.map_or(-1i128, i128::from);
    let statements: Vec<serde_json::Value> = rules
        .statements
        .iter()
        .map(|s| {
            let decides: Vec<&str> = Field::ALL
                .into_iter()
                .filter(|&f| rules.decided_by(f).is_some_and(|d| std::ptr::eq(d, s)))
                .map(Field::name)
                .collect();
            serde_json::json!({
                "origin": s.origin.to_string(),
                "directives": s.directives.iter().filter(|d| !d.is_problem()).map(|d| d.to_string()).collect::<Vec<_>>(),
                "decides": decides,
            })
        })
        .collect();
    let problems: Vec<serde_json::Value> = rules
        .problems()
        .map(|(s, d)| serde_json::json!({ "origin": s.origin.to_string(), "problem": d.to_string() }))
        .collect();
    serde_json::json!({
        "index": rules.index,
        "follow": rules.follow,
        "archive": rules.archive,
        "snippet": rules.snippet,
        "imageindex": rules.image_index,
        "translate": rules.translate,
        "indexifembedded": rules.index_if_embedded,
        "max_snippet": limit(rules.max_snippet),
        "max_image_preview": rules.max_image_preview.map(|p| p.name()),
        "max_video_preview": limit(rules.max_video_preview),
        "unavailable_after": rules.unavailable_after.map(|t| t.to_string()),
        "statements": statements,
        "problems": problems,
    })
}
