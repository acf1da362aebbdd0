//! `robotsieve meta` run as a binary: a page, a header, JSON, and failures.

use std::path::Path;
use std::process::{Command, Output};

fn robotsieve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_robotsieve")).args(args).output().expect("the robotsieve binary runs")
}

fn write_page(dir: &Path) -> String {
    let path = dir.join("page.html");
    std::fs::write(
        &path,
        "<!DOCTYPE html>\n<html>\n<head>\n<title>t</title>\n<meta name=\"robots\" content=\"max-snippet:50, noodp\">\n\
         <meta name=\"GOOGLEBOT\" content=\"noindex, noarchive\">\n</head>\n<body>\n\
         <meta name=\"robots\" content=\"nofollow\">\n</body>\n</html>\n",
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_page_for_googlebot_and_for_another_crawler() {
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path());
    let out = robotsieve(&["meta", "--agent", "googlebot", &page]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout,
        "index=false follow=true archive=false snippet=true imageindex=true translate=true indexifembedded=false \
         max-snippet=50 max-image-preview=default max-video-preview=-1 unavailable_after=none \
         (source: line 6 <meta name=\"googlebot\">: index, archive; line 5 <meta name=\"robots\">: max-snippet)\n"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("line 5 <meta name=\"robots\">: unknown directive \"noodp\""), "{stderr}");

    let out = robotsieve(&["meta", "--agent", "bingbot", &page]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("index=true follow=true archive=true"), "{stdout}");
}

#[test]
fn a_header_combines_with_the_tags_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let page = write_page(dir.path());
    let out = robotsieve(&[
        "meta",
        "--agent",
        "googlebot",
        "--json",
        "--header",
        "X-Robots-Tag: googlebot: nofollow, unavailable_after: 2030-01-02",
        "--header",
        "X-Robots-Tag: otherbot: nosnippet",
        &page,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["index"], false);
    assert_eq!(value["follow"], false);
    assert_eq!(value["archive"], false);
    assert_eq!(value["snippet"], true);
    assert_eq!(value["max_snippet"], 50);
    assert_eq!(value["max_video_preview"], -1);
    assert_eq!(value["unavailable_after"], "2030-01-02T00:00:00Z");
    assert_eq!(value["page"], page.as_str());
    let statements = value["statements"].as_array().unwrap();
    assert_eq!(statements[0]["origin"], "header 1 X-Robots-Tag googlebot:");
    assert_eq!(statements[0]["decides"], serde_json::json!(["follow", "unavailable_after"]));
    assert_eq!(value["problems"][0]["problem"], "unknown directive \"noodp\"");
}

#[test]
fn failures_exit_with_status_2_and_name_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.html");
    let out = robotsieve(&["meta", "--agent", "googlebot", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("missing.html"), "{stderr}");

    let page = write_page(dir.path());
    let out = robotsieve(&["meta", "--agent", "googlebot", "--header", "no colon", &page]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--header \"no colon\""));

    let out = robotsieve(&["meta", "--agent", "Googlebot/2.1", &page]);
    assert_eq!(out.status.code(), Some(2));
}

/// A WARC record with the given type, target and block.
fn warc_record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let content_type =
        if kind == "warcinfo" { "application/warc-fields" } else { "application/http; msgtype=response" };
    let mut record = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    record.extend_from_slice(block);
    record.extend_from_slice(b"\r\n\r\n");
    record
}

fn http_response(headers: &str, body: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{headers}\r\n{body}").into_bytes()
}

/// `meta --warc WARC --output OUT` for googlebot.
fn meta_of_warc(warc: &Path, out: &Path) -> Output {
    robotsieve(&["meta", "--agent", "googlebot", "--warc", warc.to_str().unwrap(), "--output", out.to_str().unwrap()])
}

#[test]
fn bulk_warc_lines_in_input_order_with_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let mut warc = warc_record("warcinfo", "", b"software: test\r\n");
    let mut expected_noindex = Vec::new();
    for i in 0..1500 {
        let noindex = i % 3 == 0;
        let body = if noindex { "<head><meta name=robots content=noindex></head>" } else { "<head></head><p>x</p>" };
        let headers = if i % 5 == 0 { "X-Robots-Tag: googlebot: nofollow\r\n" } else { "" };
        warc.extend(warc_record("response", &format!("https://example.com/{i}"), &http_response(headers, body)));
        expected_noindex.push((noindex, i % 5 == 0));
    }
    warc.extend(warc_record("response", "https://example.com/broken", b"not http"));
    let warc_path = dir.path().join("crawl.warc");
    std::fs::write(&warc_path, &warc).unwrap();
    let out_path = dir.path().join("verdicts.tsv");
    let out = meta_of_warc(&warc_path, &out_path);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tsv = std::fs::read_to_string(&out_path).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    assert!(lines[0].starts_with("url\tstatus\tindex\tfollow\t"));
    assert_eq!(lines.len(), 1 + 1500 + 1);
    for (i, (noindex, nofollow)) in expected_noindex.iter().enumerate() {
        let columns: Vec<&str> = lines[1 + i].split('\t').collect();
        assert_eq!(columns[0], format!("https://example.com/{i}"));
        assert_eq!(columns[1], "200");
        assert_eq!(columns[2], (!noindex).to_string(), "{}", lines[1 + i]);
        assert_eq!(columns[3], (!nofollow).to_string(), "{}", lines[1 + i]);
        assert_eq!(columns.len(), 14);
    }
    assert!(lines[1501].starts_with("https://example.com/broken\t-\t-"), "{}", lines[1501]);
    assert!(lines[1501].contains("error: not an HTTP status line"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("1502 records, 1501 HTTP responses: 500 noindex, 300 nofollow"), "{stderr}");

    // A truncated file: exit 2 naming the file and the record, no output file.
    let truncated = dir.path().join("truncated.warc");
    std::fs::write(&truncated, &warc[..warc.len() - 40]).unwrap();
    let out_path = dir.path().join("partial.tsv");
    let out = meta_of_warc(&truncated, &out_path);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("truncated.warc: record 1502"), "{stderr}");
    assert!(!out_path.exists());
}

#[test]
fn warc_records_across_many_chunks_keep_their_order_and_damage_names_its_record() {
    // 2,000 responses of varying size (about eight chunks of records), a
    // request record between them now and then.
    let dir = tempfile::tempdir().unwrap();
    let mut warc = warc_record("warcinfo", "", b"software: test\r\n");
    let mut starts = Vec::new();
    for i in 0..2000 {
        starts.push(warc.len());
        let padding = "x".repeat(i * 37 % 3000);
        let body = if i % 4 == 1 {
            format!("<head><meta name=googlebot content=noindex></head><p>{padding}</p>")
        } else {
            format!("<head></head><p>{padding}</p>")
        };
        warc.extend(warc_record("response", &format!("https://example.com/{i}"), &http_response("", &body)));
        if i % 97 == 0 {
            warc.extend(warc_record("request", &format!("https://example.com/{i}"), b"GET / HTTP/1.1\r\n\r\n"));
        }
    }
    let whole = dir.path().join("whole.warc");
    std::fs::write(&whole, &warc).unwrap();
    let expected: Vec<String> = (0..2000).map(|i| format!("https://example.com/{i}\t200\t{}", i % 4 != 1)).collect();
    let mut outputs = Vec::new();
    for threads in ["1", "2", "3"] {
        let out =
            robotsieve(&["meta", "--agent", "googlebot", "--warc", whole.to_str().unwrap(), "--threads", threads]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = stdout.lines().skip(1).collect();
        let starts: Vec<String> = lines.iter().map(|l| l.split('\t').take(3).collect::<Vec<_>>().join("\t")).collect();
        assert_eq!(starts, expected, "{threads} threads");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains("2022 records, 2000 HTTP responses: 500 noindex, 0 nofollow"), "{stderr}");
        assert!(stderr.contains(&format!("on {threads} threads")), "{stderr}");
        outputs.push(stdout);
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));

    // Damage in a late chunk, written to standard output: every line before
    // the damaged record comes out, in order, then exit 2 naming it.
    let cut = dir.path().join("cut.warc");
    std::fs::write(&cut, &warc[..starts[1600] + 30]).unwrap();
    let record = 1 + 1600 + 1600 / 97 + 1 + 1;
    let out = robotsieve(&["meta", "--agent", "googlebot", "--warc", cut.to_str().unwrap(), "--threads", "2"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(&format!("cut.warc: record {record} (offset {}): ", starts[1600])), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout, outputs[0].lines().take(1 + 1600).map(|l| format!("{l}\n")).collect::<String>());
}
