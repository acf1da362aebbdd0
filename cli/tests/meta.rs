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
