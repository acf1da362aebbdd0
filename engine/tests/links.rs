//! `PendingFile` through symbolic links: the data lands in the file the
//! link leads to, renamed over it there, and the link stays a link.

use robotsieve_engine::PendingFile;
use robotsieve_testkit::names_in;
use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::Path;

fn write_through(path: &Path, text: &str) {
    let mut file = PendingFile::create(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
    assert!(!file.in_place(), "a link to a regular file is renamed into place");
    file.commit().unwrap();
}

#[test]
fn a_link_is_written_through_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let (outputs, data) = (dir.path().join("outputs"), dir.path().join("data"));
    std::fs::create_dir_all(&outputs).unwrap();
    std::fs::create_dir_all(data.join("deeper")).unwrap();
    std::fs::write(data.join("verdicts.tsv"), "old\n").unwrap();
    // A relative link into another directory, an absolute one, a chain of
    // two, and a dangling link whose file the commit creates.
    symlink("../data/verdicts.tsv", outputs.join("relative.tsv")).unwrap();
    symlink(data.join("verdicts.tsv"), outputs.join("absolute.tsv")).unwrap();
    symlink("relative.tsv", outputs.join("chain.tsv")).unwrap();
    symlink("../data/deeper/new.tsv", outputs.join("dangling.tsv")).unwrap();
    for (link, text) in [("relative.tsv", "one\n"), ("absolute.tsv", "two\n"), ("chain.tsv", "three\n")] {
        write_through(&outputs.join(link), text);
        assert_eq!(std::fs::read_to_string(data.join("verdicts.tsv")).unwrap(), text, "through {link}");
        for name in ["relative.tsv", "absolute.tsv", "chain.tsv", "dangling.tsv"] {
            assert!(std::fs::symlink_metadata(outputs.join(name)).unwrap().file_type().is_symlink(), "{name}");
        }
    }
    write_through(&outputs.join("dangling.tsv"), "created\n");
    assert_eq!(std::fs::read_to_string(data.join("deeper/new.tsv")).unwrap(), "created\n");
    assert_eq!(std::fs::read_to_string(outputs.join("dangling.tsv")).unwrap(), "created\n");
    // No temporary file left anywhere.
    assert_eq!(names_in(&outputs), ["absolute.tsv", "chain.tsv", "dangling.tsv", "relative.tsv"]);
    assert_eq!(names_in(&data), ["deeper", "verdicts.tsv"]);

    // A file dropped without a commit leaves the target as it was.
    let mut dropped = PendingFile::create(&outputs.join("relative.tsv")).unwrap();
    dropped.write_all(b"partial").unwrap();
    let temp_dir = std::fs::canonicalize(dropped.temp_path().parent().unwrap()).unwrap();
    assert_eq!(temp_dir, std::fs::canonicalize(&data).unwrap(), "{}", dropped.temp_path().display());
    drop(dropped);
    assert_eq!(std::fs::read_to_string(data.join("verdicts.tsv")).unwrap(), "three\n");
    assert_eq!(names_in(&data), ["deeper", "verdicts.tsv"]);

    // A loop of links is an error naming the path, and leaves nothing.
    symlink("loop-b", outputs.join("loop-a")).unwrap();
    symlink("loop-a", outputs.join("loop-b")).unwrap();
    let error = PendingFile::create(&outputs.join("loop-a")).err().expect("a loop of links is refused");
    assert!(error.to_string().contains("loop-a"), "{error}");
    assert_eq!(names_in(&outputs).len(), 6);
}
