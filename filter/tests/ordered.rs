//! The ordered pipeline for chunks of another kind than URL lines
//! (`Pipeline::run_chunks_of`): chunks read in order on the calling thread,
//! worked on the pool, written in input order; a reader's damage ends the
//! run after everything before it is written.

use robotsieve_filter::{ChunkReader, ChunkSink, ChunkWorker, Config, FilterError, Pipeline};
use std::io;

/// A chunk of numbers in, their squares out.
#[derive(Default)]
struct Numbers {
    input: Vec<u64>,
    output: Vec<u64>,
}

/// Reads `0..total` in chunks of `per_chunk`; fails at `damage_at`, once
/// the numbers before it were handed out (as a WARC reader does).
struct Counting {
    next: u64,
    total: u64,
    per_chunk: u64,
    damage_at: Option<u64>,
    calls_after_end: u32,
}

impl ChunkReader for Counting {
    type Chunk = Numbers;

    fn read_next(&mut self, chunk: &mut Numbers) -> Result<bool, FilterError> {
        chunk.input.clear();
        chunk.output.clear();
        if self.damage_at == Some(self.next) {
            return Err(FilterError::Record {
                name: "numbers".into(),
                source: format!("record {}: damaged", self.next + 1).into(),
            });
        }
        while self.next < self.total && (chunk.input.len() as u64) < self.per_chunk {
            chunk.input.push(self.next);
            self.next += 1;
            if self.damage_at == Some(self.next) {
                break;
            }
        }
        if chunk.input.is_empty() {
            self.calls_after_end += 1;
        }
        Ok(!chunk.input.is_empty())
    }
}

/// Squares a chunk, slowly for early chunks so that later ones finish
/// first; fails on `fail_on`.
struct Squares {
    fail_on: Option<u64>,
}

impl ChunkWorker<Numbers> for Squares {
    fn work(&self, chunk: &mut Numbers) -> Result<(), FilterError> {
        if chunk.input.first().is_some_and(|&n| n % 7 == 0) {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if self.fail_on.is_some_and(|bad| chunk.input.contains(&bad)) {
            return Err(FilterError::Output { name: "squares".into(), source: io::Error::other("refused") });
        }
        chunk.output.extend(chunk.input.iter().map(|n| n * n));
        Ok(())
    }
}

#[derive(Default)]
struct Collected {
    squares: Vec<u64>,
    finished: bool,
}

impl ChunkSink for Collected {
    type Chunk = Numbers;

    fn write(&mut self, chunk: &Numbers) -> Result<(), FilterError> {
        assert!(!self.finished);
        self.squares.extend_from_slice(&chunk.output);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FilterError> {
        self.finished = true;
        Ok(())
    }
}

fn pipeline(threads: usize, chunks_per_thread: usize) -> Pipeline {
    Pipeline::new(Config { threads, chunks_per_thread, ..Config::default() }).unwrap()
}

fn counting(total: u64, per_chunk: u64, damage_at: Option<u64>) -> Counting {
    Counting { next: 0, total, per_chunk, damage_at, calls_after_end: 0 }
}

#[test]
fn chunks_of_any_kind_are_written_in_input_order() {
    for (threads, per_thread, per_chunk) in [(1, 1, 1), (4, 1, 3), (3, 2, 7), (2, 4, 100)] {
        let mut reader = counting(1000, per_chunk, None);
        let mut sink = Collected::default();
        let chunks = pipeline(threads, per_thread).run_chunks_of(&mut reader, &Squares { fail_on: None }, &mut sink);
        assert_eq!(chunks.unwrap(), 1000u64.div_ceil(per_chunk));
        assert_eq!(sink.squares, (0..1000u64).map(|n| n * n).collect::<Vec<_>>(), "{threads} threads");
        assert!(sink.finished);
        assert_eq!(reader.calls_after_end, 1, "the reader is not asked again after its end");
    }
}

#[test]
fn a_readers_damage_ends_the_run_after_what_came_before_it() {
    for damage_at in [0u64, 1, 5, 6, 499, 999] {
        let mut reader = counting(1000, 6, Some(damage_at));
        let mut sink = Collected::default();
        let error = pipeline(3, 2).run_chunks_of(&mut reader, &Squares { fail_on: None }, &mut sink).unwrap_err();
        assert_eq!(error.to_string(), format!("numbers: record {}: damaged", damage_at + 1));
        assert_eq!(sink.squares, (0..damage_at).map(|n| n * n).collect::<Vec<_>>(), "damage at {damage_at}");
        assert!(!sink.finished, "a failed run is not finished");
    }
}

#[test]
fn a_workers_error_stops_the_run_and_nothing_of_its_chunk_is_written() {
    let mut reader = counting(1000, 10, None);
    let mut sink = Collected::default();
    let error = pipeline(2, 2).run_chunks_of(&mut reader, &Squares { fail_on: Some(505) }, &mut sink).unwrap_err();
    assert_eq!(error.to_string(), "squares: cannot write: refused");
    assert!(sink.squares.len() <= 500, "{} squares written", sink.squares.len());
    assert_eq!(sink.squares, (0..sink.squares.len() as u64).map(|n| n * n).collect::<Vec<_>>());
    assert!(!sink.finished);
}

/// A worker that panics on its third chunk.
struct Panicking;

impl ChunkWorker<Numbers> for Panicking {
    fn work(&self, chunk: &mut Numbers) -> Result<(), FilterError> {
        assert!(!chunk.input.contains(&25), "twenty-five");
        Ok(())
    }
}

#[test]
fn a_workers_panic_is_an_error_not_a_crash() {
    let mut reader = counting(100, 10, None);
    let error = pipeline(2, 1).run_chunks_of(&mut reader, &Panicking, &mut Collected::default()).unwrap_err();
    assert!(matches!(&error, FilterError::ClassifierPanicked { message } if message == "twenty-five"), "{error}");
}
