//! Writing a [`super::PendingFile`] past the page cache (`O_DIRECT`), on a
//! thread of its own.
//!
//! A buffered `write` of a run's output costs the writing thread the
//! kernel's copy into the page cache and the allocation of every page of it
//! (on a machine whose page cache is full, the reclaim of an old page
//! first): for `filter --verdicts` that is the one serial cost of the run
//! (`benches/filter_serial.sh`), paid on the calling thread that orders the
//! chunks. Here the bytes are copied into block-aligned buffers instead,
//! and each full buffer is written with `O_DIRECT` by a writer thread while
//! the next one fills: the device reads the buffer itself, no page is
//! allocated, and the disk's time overlaps the run. The unaligned tail is
//! written through the ordinary descriptor at the end.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// The alignment `O_DIRECT` asks of buffers, lengths and offsets: a
/// multiple of every logical block size in use (512 B and 4 KiB).
pub(crate) const ALIGN: usize = 4096;

/// How many bytes each aligned buffer holds: large enough that the writes
/// are few, small against the memory a run needs otherwise.
pub(crate) const BUFFER: usize = 4 << 20;

/// How many buffers exist: one filling, the others written or waiting.
const BUFFERS: usize = 3;

/// How many writes may wait for the writer thread: enough that a pause of
/// the disk does not stop the run at once, few enough to bound memory
/// (a job is an aligned buffer or a chunk's buffer of a few MiB).
const QUEUE: usize = 4;

/// A write for the writer thread: bytes and where they go in the file.
enum Job {
    /// The first `len` bytes of an aligned buffer, at `offset`.
    Buffer(Aligned, usize, u64),
    /// `len` bytes of a caller's buffer from index `from` (block-aligned in
    /// memory), at `offset`; the buffer is given back once written.
    Placed(Vec<u8>, usize, usize, u64),
}

/// A block-aligned window of `BUFFER` bytes in an allocation of its own.
struct Aligned {
    bytes: Vec<u8>,
    start: usize,
}

impl Aligned {
    fn new() -> Aligned {
        let bytes = vec![0u8; BUFFER + ALIGN];
        let start = bytes.as_ptr().align_offset(ALIGN);
        Aligned { bytes, start }
    }

    fn window(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + BUFFER]
    }
}

/// The direct writer of one file: the buffer being filled and the thread
/// that writes full ones, in order, at `handed` onwards.
pub(super) struct Direct {
    filling: Aligned,
    len: usize,
    /// Bytes handed to the thread so far (a multiple of `ALIGN`).
    handed: u64,
    to_writer: Option<mpsc::SyncSender<Job>>,
    free: mpsc::Receiver<Aligned>,
    /// Buffers of [`Direct::write_placed`] the writer is done with.
    written_back: mpsc::Receiver<Vec<u8>>,
    writer: Option<JoinHandle<io::Result<()>>>,
}

impl Direct {
    /// Opens `path` (already created, empty) a second time with `O_DIRECT`
    /// and starts its writer; `None` where the file system or the system
    /// has no direct I/O (tmpfs, say): the caller then writes buffered.
    /// `buffered` is a descriptor of the same file, which the writer falls
    /// back to should a direct write be refused.
    pub(super) fn start(path: &Path, buffered: &File) -> Option<Direct> {
        let direct = open_direct(path)?;
        let buffered = buffered.try_clone().ok()?;
        let (to_writer, jobs) = mpsc::sync_channel::<Job>(QUEUE);
        let (give_back, free) = mpsc::channel();
        let (give_back_placed, written_back) = mpsc::channel();
        for _ in 1..BUFFERS {
            give_back.send(Aligned::new()).ok()?;
        }
        let writer = std::thread::Builder::new()
            .name("robotsieve-direct".into())
            .spawn(move || {
                let mut refused = false;
                let mut write = |bytes: &[u8], offset: u64| {
                    if !refused {
                        match direct.write_all_at(bytes, offset) {
                            Ok(()) => return Ok(()),
                            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => refused = true,
                            Err(e) => return Err(e),
                        }
                    }
                    buffered.write_all_at(bytes, offset)
                };
                // The owner is gone (a send fails) only when it is dropping the file.
                for job in jobs {
                    match job {
                        Job::Buffer(mut buffer, len, offset) => {
                            write(&buffer.window()[..len], offset)?;
                            let _ = give_back.send(buffer);
                        }
                        Job::Placed(buffer, from, len, offset) => {
                            write(&buffer[from..from + len], offset)?;
                            let _ = give_back_placed.send(buffer);
                        }
                    }
                }
                Ok(())
            })
            .ok()?;
        Some(Direct {
            filling: Aligned::new(),
            len: 0,
            handed: 0,
            to_writer: Some(to_writer),
            free,
            written_back,
            writer: Some(writer),
        })
    }

    /// Where in a block the next byte appended lands: the number of bytes
    /// [`Direct::write_placed`] puts in front of a buffer's bytes.
    pub(super) fn lead(&self) -> usize {
        self.len % ALIGN
    }

    /// Appends `buf[start..]`, handing `buf` itself to the writer when its
    /// bytes lie in memory as they will in the file: when the [`Direct::lead`]
    /// bytes before `start` are free to take the unaligned bytes before
    /// them and `start - lead` is block-aligned in memory. `buf` is then
    /// replaced by a buffer written earlier (emptied) or an empty one; the
    /// bytes after the last whole block are copied and wait for the next
    /// write. Otherwise the bytes are copied as by [`Direct::write`], and
    /// `buf` stays.
    pub(super) fn write_placed(&mut self, buf: &mut Vec<u8>, start: usize) -> io::Result<()> {
        // Only the bytes of a last, unfinished block may wait in `filling`.
        let whole = self.len / ALIGN * ALIGN;
        if whole > 0 {
            self.hand(whole)?;
        }
        let lead = self.len;
        let start = start.min(buf.len());
        let bytes = buf.len() - start;
        // The whole blocks from the lead's start to the buffer's end.
        let len = (lead + bytes) / ALIGN * ALIGN;
        if start < lead || len == 0 || buf[start - lead..].as_ptr().align_offset(ALIGN) != 0 {
            return self.write(&buf[start..]);
        }
        let from = start - lead;
        buf[from..start].copy_from_slice(&self.filling.window()[..lead]);
        let rest = lead + bytes - len;
        self.filling.window()[..rest].copy_from_slice(&buf[from + len..]);
        let mut spare = self.written_back.try_recv().unwrap_or_default();
        spare.clear();
        let full = std::mem::replace(buf, spare);
        let sender = self.to_writer.as_ref().expect("a direct writer is finished once");
        if sender.send(Job::Placed(full, from, len, self.handed)).is_err() {
            return Err(self.writer_failed());
        }
        self.handed += len as u64;
        self.len = rest;
        Ok(())
    }

    /// Appends `bytes`, handing each full buffer to the writer (waiting for
    /// a free buffer when the disk lags).
    pub(super) fn write(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let n = bytes.len().min(BUFFER - self.len);
            self.filling.window()[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
            if self.len == BUFFER {
                self.hand(BUFFER)?;
            }
        }
        Ok(())
    }

    /// Hands the first `len` bytes (a multiple of `ALIGN`) of the buffer
    /// being filled to the writer and moves the rest to a fresh buffer.
    fn hand(&mut self, len: usize) -> io::Result<()> {
        let Ok(mut next) = self.free.recv() else {
            return Err(self.writer_failed());
        };
        let rest = self.len - len;
        next.window()[..rest].copy_from_slice(&self.filling.window()[len..self.len]);
        let full = std::mem::replace(&mut self.filling, next);
        let sender = self.to_writer.as_ref().expect("a direct writer is finished once");
        if sender.send(Job::Buffer(full, len, self.handed)).is_err() {
            return Err(self.writer_failed());
        }
        self.handed += len as u64;
        self.len = rest;
        Ok(())
    }

    /// The writer thread's error, once it has stopped.
    fn writer_failed(&mut self) -> io::Error {
        self.to_writer = None;
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            _ => io::Error::other("the direct writer stopped"),
        }
    }

    /// Writes everything appended so far: the aligned part through the
    /// writer, which is then waited for, and the tail through `buffered`.
    /// Returns the file's length.
    pub(super) fn finish(mut self, buffered: &File) -> io::Result<u64> {
        let aligned = self.len / ALIGN * ALIGN;
        if aligned > 0 {
            self.hand(aligned)?;
        }
        self.to_writer = None;
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(result)) => result?,
            _ => return Err(io::Error::other("the direct writer panicked")),
        }
        buffered.write_all_at(&self.filling.window()[..self.len], self.handed)?;
        Ok(self.handed + self.len as u64)
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        // Let the writer end (its last writes go to a file being removed).
        self.to_writer = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    File::options().write(true).custom_flags(libc::O_DIRECT).open(path).ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_: &Path) -> Option<File> {
    None
}
