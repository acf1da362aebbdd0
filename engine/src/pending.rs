//! Output files that appear only when a run succeeds: [`PendingFile`]
//! writes under a temporary name beside the final one and renames into
//! place on [`PendingFile::commit`].
//!
//! A signal ends a process without running destructors, so a binary that
//! wants its temporary files gone on SIGINT or SIGTERM calls
//! [`install_signal_cleanup`] once at start-up and [`remove_pending_files`]
//! from its handler. Only then are live temporary paths kept in a
//! process-wide registry: a library caller (the Python extension) that does
//! not ask for this never takes the registry's lock.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

mod direct;

/// How many bytes each direct-write buffer holds (for tests of [`PendingFile::write_placed`]).
pub(crate) const DIRECT_BUFFER: usize = direct::BUFFER;

/// An output that could not be created, written or committed: its name (the
/// path given) and the cause.
#[derive(Debug)]
pub struct OutputError {
    /// The output's name (its final path).
    pub name: String,
    /// The underlying error.
    pub source: io::Error,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: cannot write: {}", self.name, self.source)
    }
}

impl std::error::Error for OutputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// An output file written under a temporary name in its final directory and
/// renamed into place by [`PendingFile::commit`]. Dropped without a commit
/// (an error, a panic), it removes the temporary file: a failed run leaves
/// neither a partial file under the final name nor litter.
///
/// A signal ends the process without running destructors: once the binary
/// called [`install_signal_cleanup`], the temporary path is registered from
/// creation to commit or drop, and its signal handler removes every
/// registered file with [`remove_pending_files`].
///
/// Writes go straight to the file, unbuffered: the pipeline writes whole
/// chunks of output at a time. Wrap it in a `BufWriter` for small writes.
///
/// The commit syncs the file before the rename (a renamed file is a whole
/// one even after a crash). So that this sync does not wait for the whole
/// file's writeback at the end of a run, a file written through a rename
/// starts the writeback of every `WRITEBACK_STEP` bytes as soon as they
/// are written (Linux's `sync_file_range`, which only queues the I/O): the
/// disk writes while later chunks are classified, and the commit's sync
/// waits for little more than the last step.
pub struct PendingFile {
    /// The path given, for messages.
    path: PathBuf,
    /// What the commit renames over: the path, or the file a symbolic link
    /// there leads to.
    target: PathBuf,
    temp_path: PathBuf,
    file: Option<File>,
    /// Bytes written so far, and how many of them have had their writeback
    /// started.
    written: u64,
    writeback_started: u64,
    /// The writer past the page cache, after [`PendingFile::write_direct`].
    direct: Option<direct::Direct>,
}

/// The block size of writes past the page cache: what
/// [`PendingFile::write_placed`] aligns buffers to.
const BLOCK: usize = direct::ALIGN;

/// How many written bytes a [`PendingFile`] lets accumulate before it starts
/// their writeback: large enough that the hint costs nothing per chunk,
/// small enough that little is left for the commit's sync.
pub(crate) const WRITEBACK_STEP: u64 = 8 << 20;

impl PendingFile {
    /// Creates the temporary file `.NAME.robotsieve-PID-N.tmp` next to `path`.
    ///
    /// Streams are written directly, in order, and never renamed over:
    /// renaming a file over one would replace the device, pipe or link
    /// itself, and a partial write to a stream cannot be taken back anyway.
    /// They are `-` and the names of standard output and error (`/dev/stdout`,
    /// `/dev/fd/1`, `/proc/self/fd/2`, ...), which write to the descriptor
    /// this process was given (so a shell's `>>` still appends); other
    /// descriptors' names (`/dev/fd/63` of a `>(...)`); and whatever exists
    /// and is not a regular file (`/dev/null`, `/dev/full`, a named pipe, a
    /// terminal). A directory is refused at once.
    ///
    /// A symbolic link is written through: the temporary file goes next to
    /// the file the link leads to (through every link of a chain, whether
    /// or not that file exists yet), and the commit renames over that file,
    /// so the link stays a link.
    pub fn create(path: &Path) -> Result<PendingFile, OutputError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let failed = |source| OutputError { name: path.display().to_string(), source };
        if let Some(file) = open_stream(path) {
            let file = file.map_err(failed)?;
            return Ok(PendingFile::new(path.to_path_buf(), path.to_path_buf(), PathBuf::new(), file));
        }
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(failed(io::Error::other("is a directory")));
        }
        let target = link_target(path).map_err(failed)?;
        let file_name = target.file_name().ok_or_else(|| failed(io::Error::other("not a file name")))?;
        let dir = match target.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        loop {
            let mut temp_name = std::ffi::OsString::from(".");
            temp_name.push(file_name);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            temp_name.push(format!(".robotsieve-{}-{n}.tmp", std::process::id()));
            let temp_path = dir.join(temp_name);
            match File::options().read(true).write(true).create_new(true).open(&temp_path) {
                Ok(file) => {
                    if SIGNAL_CLEANUP.load(Ordering::Relaxed) {
                        let mut registry = pending_registry();
                        if registry.closed {
                            drop(file);
                            let _ = std::fs::remove_file(&temp_path);
                            return Err(failed(io::Error::other("the process is being interrupted")));
                        }
                        registry.temp_paths.push(temp_path.clone());
                    }
                    return Ok(PendingFile::new(path.to_path_buf(), target, temp_path, file));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(failed(e)),
            }
        }
    }

    fn new(path: PathBuf, target: PathBuf, temp_path: PathBuf, file: File) -> PendingFile {
        PendingFile { path, target, temp_path, file: Some(file), written: 0, writeback_started: 0, direct: None }
    }

    /// From now on, writes bypass the page cache: they are copied into
    /// block-aligned buffers that a thread of the file's own writes with
    /// `O_DIRECT` while the next fills. For an output written in large
    /// pieces and only committed (the filter's lists and verdicts): the
    /// writing thread no longer pays the kernel's copy into the page cache
    /// and its page allocation, which on `filter --verdicts` is the one
    /// serial cost of the run (README "Filter performance"), and the disk
    /// writes while later chunks are classified. Does nothing for a file
    /// written in place (a stream), after something was written, or where
    /// the file system has no direct I/O; [`PendingFile::file_mut`] ends it
    /// (everything written is then in the file).
    pub fn write_direct(&mut self) {
        if self.in_place() || self.written > 0 || self.direct.is_some() {
            return;
        }
        if let Some(file) = &self.file {
            self.direct = direct::Direct::start(&self.temp_path, file);
        }
    }

    /// The block of a file written past the page cache: [`PendingFile::lead`]
    /// and [`PendingFile::write_placed`] place bytes within blocks of this size.
    pub const BLOCK: usize = BLOCK;

    /// Whether writes bypass the page cache ([`PendingFile::write_direct`]).
    pub fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    /// For a writer that can choose where its bytes lie in memory (see
    /// [`PendingFile::write_placed`]): where in a block of [`PendingFile::BLOCK`] bytes
    /// the next byte written lands, when the file is written past the page
    /// cache; `None` otherwise (then placement gains nothing).
    pub fn lead(&self) -> Option<usize> {
        self.direct.as_ref().map(direct::Direct::lead)
    }

    /// Writes `buf[start..]`, as `write_all` would, without copying it when
    /// it is placed: when the file is written past the page cache, the
    /// [`PendingFile::lead`] bytes before `start` are free (their content
    /// is not written) and `start - lead` is a multiple of [`PendingFile::BLOCK`] in
    /// memory, `buf` itself goes to the file's writer thread and is
    /// replaced by an empty buffer (one written earlier, its memory kept,
    /// or a new one). Otherwise `buf[start..]` is copied and `buf` stays.
    /// Either way the file then holds the same bytes.
    pub fn write_placed(&mut self, buf: &mut Vec<u8>, start: usize) -> io::Result<()> {
        let Some(direct) = &mut self.direct else {
            return self.write_all(&buf[start.min(buf.len())..]);
        };
        let len = buf.len().saturating_sub(start);
        direct.write_placed(buf, start)?;
        self.written += len as u64;
        Ok(())
    }

    /// Ends [`PendingFile::write_direct`]: waits for the direct writes and
    /// writes the tail, leaving the file's cursor at its end.
    fn end_direct(&mut self) -> io::Result<()> {
        let Some(direct) = self.direct.take() else { return Ok(()) };
        let file = self.file.as_mut().ok_or_else(|| io::Error::other("the file was committed"))?;
        let len = direct.finish(file)?;
        io::Seek::seek(file, io::SeekFrom::Start(len))?;
        Ok(())
    }

    /// Counts `len` more bytes written and, once a [`WRITEBACK_STEP`] of them
    /// is waiting, starts their writeback (a file renamed into place only).
    fn wrote(&mut self, len: usize) {
        self.written += len as u64;
        if self.in_place() || self.written - self.writeback_started < WRITEBACK_STEP {
            return;
        }
        if let Some(file) = &self.file {
            start_writeback(file, self.writeback_started, self.written - self.writeback_started);
        }
        self.writeback_started = self.written;
    }

    /// Whether this output is written in place ([`PendingFile::create`]
    /// says which are), rather than renamed into place on commit.
    pub fn in_place(&self) -> bool {
        self.temp_path.as_os_str().is_empty()
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary path the data is written to until the commit (empty
    /// when the destination is written in place).
    pub fn temp_path(&self) -> &Path {
        &self.temp_path
    }

    /// Closes the file and renames it to its final path (replacing any file
    /// there; through a symbolic link, the file it leads to). On failure
    /// the temporary file is removed.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let ended = self.end_direct();
        let failed = |source| OutputError { name: self.path.display().to_string(), source };
        ended.map_err(failed)?;
        let mut file = self.file.take().expect("a pending file is committed once");
        if self.temp_path.as_os_str().is_empty() {
            // Written in place (not a regular file): nothing to rename.
            return file.flush().map_err(failed);
        }
        file.sync_all().map_err(failed)?;
        drop(file);
        std::fs::rename(&self.temp_path, &self.target).map_err(failed)?;
        unregister_pending(&std::mem::take(&mut self.temp_path));
        Ok(())
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file.as_mut().ok_or_else(|| io::Error::other("the file was committed"))
    }

    /// The open file itself (opened for reading too), for a writer that
    /// must seek (the artifact writer fills in its header last) or read back
    /// what it wrote.
    pub fn file_mut(&mut self) -> io::Result<&mut File> {
        self.end_direct()?;
        self.file()
    }
}

/// Where a write to `path` lands: `path` itself, or, when it is a symbolic
/// link, the file at the end of its chain of links (which need not exist:
/// writing through a dangling link creates its target). A chain longer
/// than the system's limit is an error, as opening it would be.
fn link_target(path: &Path) -> io::Result<PathBuf> {
    const MAX_LINKS: usize = 40;
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

impl Write for PendingFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(direct) = &mut self.direct {
            direct.write(bytes)?;
            self.written += bytes.len() as u64;
            return Ok(bytes.len());
        }
        let n = self.file()?.write(bytes)?;
        self.wrote(n);
        Ok(n)
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Some(direct) = &mut self.direct {
            direct.write(bytes)?;
            self.written += bytes.len() as u64;
            return Ok(());
        }
        self.file()?.write_all(bytes)?;
        self.wrote(bytes.len());
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.temp_path.as_os_str().is_empty() {
            self.direct = None;
            self.file = None;
            let _ = std::fs::remove_file(&self.temp_path);
            unregister_pending(&self.temp_path);
        }
    }
}

/// Queues the writeback of `len` bytes of `file` from `offset` without
/// waiting for it. Only a hint: a failure here (a file system without the
/// call) changes nothing, since the commit's sync reports every error.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else { return };
    // SAFETY: the descriptor is open for as long as `file` is borrowed, and
    // the call reads no memory of this process.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File, _: u64, _: u64) {}

/// The stream `path` names, opened for writing, if it names one (see
/// [`PendingFile::create`]); `None` for a file to write through a rename.
fn open_stream(path: &Path) -> Option<io::Result<File>> {
    if let Some(stream) = standard_stream(path) {
        return Some(stream);
    }
    let in_proc = || {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::canonicalize(dir).is_ok_and(|dir| dir.starts_with("/proc"))
    };
    let not_regular = || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    (in_proc() || not_regular()).then(|| File::options().write(true).open(path))
}

/// A duplicate of this process's standard output or error when `path` is
/// `-` (standard output) or names one of them.
fn standard_stream(path: &Path) -> Option<io::Result<File>> {
    let name = path.to_str()?;
    let fd = match name {
        "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1" => 1,
        "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2" => 2,
        _ => return None,
    };
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let owned =
            if fd == 1 { io::stdout().as_fd().try_clone_to_owned() } else { io::stderr().as_fd().try_clone_to_owned() };
        Some(owned.map(File::from))
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        None
    }
}

/// The temporary paths of this process's live [`PendingFile`]s (a run has a
/// handful), and whether [`remove_pending_files`] has run.
struct PendingRegistry {
    temp_paths: Vec<PathBuf>,
    closed: bool,
}

/// Whether [`install_signal_cleanup`] was called: whether new pending files
/// are registered at all.
static SIGNAL_CLEANUP: AtomicBool = AtomicBool::new(false);

/// Makes every [`PendingFile`] created from now on register its temporary
/// path, so that a signal handler can remove it with
/// [`remove_pending_files`]. For a binary that installs such a handler; a
/// library caller that does not (its host process owns the signals) leaves
/// it off, and its files are removed by their destructors only.
pub fn install_signal_cleanup() {
    SIGNAL_CLEANUP.store(true, Ordering::Relaxed);
}

static PENDING: Mutex<PendingRegistry> = Mutex::new(PendingRegistry { temp_paths: Vec::new(), closed: false });

/// The registry, even after a panic while it was locked: every update leaves
/// it consistent, so a poisoned lock holds nothing wrong.
fn pending_registry() -> MutexGuard<'static, PendingRegistry> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Forgets a temporary path once it was renamed into place or removed. (Done
/// after the rename or removal, so that an interruption in between still
/// finds the file.)
fn unregister_pending(temp_path: &Path) {
    if !SIGNAL_CLEANUP.load(Ordering::Relaxed) {
        return;
    }
    let mut registry = pending_registry();
    if let Some(i) = registry.temp_paths.iter().position(|p| p == temp_path) {
        registry.temp_paths.swap_remove(i);
    }
}

/// Removes the temporary file of every live [`PendingFile`] of this process
/// and returns how many were removed: for a SIGINT or SIGTERM handler to call
/// just before it exits, since destructors do not run then. Best effort: a
/// file that cannot be removed is skipped; it never panics.
///
/// The data written so far is lost (a file open for writing is only
/// unlinked), and from then on [`PendingFile::create`] fails, so that no
/// output started while the process exits is left behind either. Files
/// already committed stay.
pub fn remove_pending_files() -> usize {
    let mut registry = pending_registry();
    registry.closed = true;
    let temp_paths = std::mem::take(&mut registry.temp_paths);
    temp_paths.iter().filter(|temp_path| std::fs::remove_file(temp_path).is_ok()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_testkit::names_in as names;

    /// A new directory, and a pending `out.tsv` in it.
    fn pending() -> (tempfile::TempDir, PendingFile) {
        let dir = tempfile::tempdir().unwrap();
        let file = PendingFile::create(&dir.path().join("out.tsv")).unwrap();
        (dir, file)
    }

    /// Commits `file` (the pending `out.tsv` of `dir`), which must hold
    /// `expected`, checking that nothing is under the final name before and
    /// nothing else is left in `dir` after.
    fn commit_holds(file: PendingFile, dir: &tempfile::TempDir, expected: &[u8]) {
        let path = dir.path().join("out.tsv");
        assert!(!path.exists(), "nothing under the final name before the commit");
        file.commit().unwrap();
        assert!(std::fs::read(&path).unwrap() == expected, "the committed file holds every byte in order");
        assert_eq!(names(dir.path()), ["out.tsv"]);
    }

    #[test]
    fn writeback_starts_step_by_step_and_the_commit_keeps_every_byte() {
        let (dir, mut file) = pending();
        let mut expected = Vec::new();
        let step = WRITEBACK_STEP as usize;
        // Pieces of a third of a step, by write_all and by write: the writeback
        // of a step starts once a whole step is waiting, never before.
        for seed in 0..7u8 {
            let piece = robotsieve_testkit::varied_bytes(step / 3 + 1, seed);
            if seed % 2 == 0 {
                file.write_all(&piece).unwrap();
            } else {
                let mut rest = &piece[..];
                while !rest.is_empty() {
                    let n = file.write(rest).unwrap();
                    rest = &rest[n..];
                }
            }
            expected.extend_from_slice(&piece);
            assert_eq!(file.written, expected.len() as u64);
            assert!(file.written - file.writeback_started < WRITEBACK_STEP, "a whole step waits after {seed}");
            assert!(file.writeback_started <= file.written);
        }
        assert_eq!(file.writeback_started, (step / 3 + 1) as u64 * 6, "started after pieces 3 and 6");
        commit_holds(file, &dir, &expected);
    }

    #[test]
    fn a_file_dropped_after_its_writeback_started_leaves_nothing() {
        let (dir, mut file) = pending();
        file.write_all(&robotsieve_testkit::varied_bytes(WRITEBACK_STEP as usize * 2, 7)).unwrap();
        assert_eq!(file.writeback_started, WRITEBACK_STEP * 2);
        drop(file);
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn direct_writes_keep_every_byte_in_order() {
        let (dir, mut file) = pending();
        file.write_direct();
        let mut expected = Vec::new();
        // Pieces that end a buffer exactly, cross one, span several, and a
        // one-byte tail: every byte must land once, in order.
        let sizes = [direct::BUFFER, 1, direct::BUFFER * 2 + 4095, 4096, 0, 12_345, 1];
        for (seed, &len) in sizes.iter().enumerate() {
            let piece = robotsieve_testkit::varied_bytes(len, seed as u8);
            file.write_all(&piece).unwrap();
            expected.extend_from_slice(&piece);
        }
        commit_holds(file, &dir, &expected);
    }

    #[test]
    fn a_direct_file_opened_again_goes_on_at_its_end() {
        let (dir, mut file) = pending();
        file.write_direct();
        let first = robotsieve_testkit::varied_bytes(direct::BUFFER + 100, 3);
        file.write_all(&first).unwrap();
        file.file_mut().unwrap().write_all(b"after").unwrap();
        assert!(!file.is_direct(), "file_mut ends the direct writes");
        file.write_all(b"!").unwrap();
        file.commit().unwrap();
        assert!(std::fs::read(dir.path().join("out.tsv")).unwrap() == [&first[..], b"after!"].concat());
    }

    #[test]
    fn a_direct_file_dropped_leaves_nothing() {
        let (dir, mut file) = pending();
        file.write_direct();
        file.write_all(&robotsieve_testkit::varied_bytes(direct::BUFFER * 3, 5)).unwrap();
        drop(file);
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn streams_and_started_files_are_not_written_direct() {
        let mut stream = PendingFile::create(Path::new("/dev/null")).unwrap();
        stream.write_direct();
        assert!(!stream.is_direct());
        let dir = tempfile::tempdir().unwrap();
        let mut started = PendingFile::create(&dir.path().join("out.tsv")).unwrap();
        started.write_all(b"x").unwrap();
        started.write_direct();
        assert!(!started.is_direct(), "bytes already written stay where they are");
    }

    #[test]
    fn streams_are_written_in_place_without_writeback() {
        let mut file = PendingFile::create(Path::new("/dev/null")).unwrap();
        assert!(file.in_place());
        file.write_all(&robotsieve_testkit::varied_bytes(WRITEBACK_STEP as usize + 1, 1)).unwrap();
        assert_eq!(file.writeback_started, 0);
        file.commit().unwrap();
    }
}
