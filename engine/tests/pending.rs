//! `remove_pending_files`, as a signal handler calls it, after the binary
//! asked for it with `install_signal_cleanup`. It closes the process's
//! registry for good, so it has this test binary to itself: one test, one
//! process.

use robotsieve_engine::{install_signal_cleanup, remove_pending_files, PendingFile};
use robotsieve_testkit::names_in;
use std::io::Write;

#[test]
fn removes_live_temporary_files_only_and_then_refuses_new_ones() {
    // Before the binary asks for signal cleanup (as a library caller never
    // does), files are not registered: the handler would leave them be.
    let library = tempfile::tempdir().unwrap();
    let unregistered = PendingFile::create(&library.path().join("library.txt")).unwrap();
    install_signal_cleanup();

    let dir = tempfile::tempdir().unwrap();
    let mut committed = PendingFile::create(&dir.path().join("done.txt")).unwrap();
    committed.write_all(b"kept\n").unwrap();
    committed.commit().unwrap();
    let dropped = PendingFile::create(&dir.path().join("dropped.txt")).unwrap();
    drop(dropped);

    let mut open = PendingFile::create(&dir.path().join("a.txt")).unwrap();
    open.write_all(b"partial").unwrap();
    let idle = PendingFile::create(&dir.path().join("b.txt")).unwrap();
    // A file opened for writing elsewhere in the process: its removal must not
    // stop the writer, which goes on into the unlinked inode.
    let mut writer = std::fs::OpenOptions::new().append(true).open(open.temp_path()).unwrap();
    assert_eq!(names_in(dir.path()).len(), 3, "{:?}", names_in(dir.path()));

    assert_eq!(remove_pending_files(), 2, "the two live temporary files, not the committed or dropped ones");
    assert_eq!(names_in(dir.path()), ["done.txt"]);
    assert!(unregistered.temp_path().exists(), "a file created before install_signal_cleanup is not the handler's");
    drop(unregistered);
    assert!(names_in(library.path()).is_empty(), "its destructor still removes it");
    writer.write_all(b" more").unwrap();
    open.write_all(b" still writable").unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("done.txt")).unwrap(), "kept\n");

    let error = PendingFile::create(&dir.path().join("c.txt")).err().expect("no new output after the removal");
    assert!(error.to_string().contains("c.txt"), "{error}");
    assert_eq!(names_in(dir.path()), ["done.txt"], "the refused file was not left behind");
    assert!(open.commit().is_err(), "the temporary file is gone: nothing to rename");
    drop(idle);
    assert_eq!(remove_pending_files(), 0);
    assert_eq!(names_in(dir.path()), ["done.txt"]);
}
