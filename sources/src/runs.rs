//! An external sort: items gathered in memory up to a byte budget, sorted
//! and spilled as runs to unnamed temporary files, then merged (one buffered
//! reader per run). What the bounded resolution ([`crate::bounded`]) sorts
//! its per-record words with, and what other tools that must order more
//! than fits in memory (the CLI's split of a URL list by shard) sort with.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};

/// An item that can be sorted beyond memory: totally ordered (no two items
/// of one sort compare equal, so the order never depends on the sort), and
/// written to and read from a run.
pub trait Spill: Ord + Sized {
    /// Appends the item's bytes.
    fn write_to(&self, out: &mut impl Write) -> io::Result<()>;
    /// The next item of a run, `None` at its end.
    fn read_from(input: &mut impl Read) -> io::Result<Option<Self>>;
    /// Bytes it takes in memory, for the budget.
    fn memory(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// Reads exactly `buf.len()` bytes, or none at the end of the input.
pub fn read_or_end(input: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "a temporary run is cut short")),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Items sorted in memory up to a budget, spilled as sorted runs beyond it.
pub struct SortedRuns<T: Spill> {
    buffer: Vec<T>,
    used: usize,
    budget: usize,
    runs: Vec<File>,
}

impl<T: Spill> SortedRuns<T> {
    /// A sort holding at most about `budget` bytes of items in memory.
    pub fn new(budget: usize) -> Self {
        SortedRuns { buffer: Vec::new(), used: 0, budget: budget.max(1), runs: Vec::new() }
    }

    /// Adds an item.
    pub fn push(&mut self, item: T) -> io::Result<()> {
        self.used += item.memory();
        self.buffer.push(item);
        if self.used >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// How many runs went to temporary files so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> io::Result<()> {
        self.buffer.sort_unstable();
        let mut file = BufWriter::with_capacity(64 * 1024, tempfile::tempfile()?);
        for item in self.buffer.drain(..) {
            item.write_to(&mut file)?;
        }
        let mut file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        self.runs.push(file);
        self.used = 0;
        Ok(())
    }

    /// Every item, in order.
    pub fn finish(mut self) -> io::Result<Merged<T>> {
        if self.runs.is_empty() {
            self.buffer.sort_unstable();
            return Ok(Merged(Merging::Memory(self.buffer.into_iter())));
        }
        if !self.buffer.is_empty() {
            self.spill()?;
        }
        // A read buffer per run within the budget: 4 to 64 KiB.
        let buffer = (self.budget / self.runs.len()).clamp(4096, 64 * 1024);
        let mut readers: Vec<BufReader<File>> =
            self.runs.into_iter().map(|f| BufReader::with_capacity(buffer, f)).collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (i, reader) in readers.iter_mut().enumerate() {
            if let Some(item) = T::read_from(reader)? {
                heap.push(Reverse((item, i)));
            }
        }
        Ok(Merged(Merging::Runs { readers, heap }))
    }
}

/// The merged items of a [`SortedRuns`], in order.
pub struct Merged<T: Spill>(Merging<T>);

/// Where a [`Merged`] takes its items from.
enum Merging<T: Spill> {
    /// Everything fitted in memory.
    Memory(std::vec::IntoIter<T>),
    /// A k-way merge of the runs.
    Runs { readers: Vec<BufReader<File>>, heap: BinaryHeap<Reverse<(T, usize)>> },
}

impl<T: Spill> Iterator for Merged<T> {
    type Item = io::Result<T>;

    fn next(&mut self) -> Option<io::Result<T>> {
        match &mut self.0 {
            Merging::Memory(items) => items.next().map(Ok),
            Merging::Runs { readers, heap } => {
                let Reverse((item, i)) = heap.pop()?;
                match T::read_from(&mut readers[i]) {
                    Ok(Some(next)) => heap.push(Reverse((next, i))),
                    Ok(None) => {}
                    Err(e) => return Some(Err(e)),
                }
                Some(Ok(item))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(PartialEq, Eq, PartialOrd, Ord, Debug)]
    struct Word(u64);

    impl Spill for Word {
        fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
            out.write_all(&self.0.to_le_bytes())
        }
        fn read_from(input: &mut impl Read) -> io::Result<Option<Self>> {
            let mut b = [0; 8];
            Ok(read_or_end(input, &mut b)?.then(|| Word(u64::from_le_bytes(b))))
        }
    }

    #[test]
    fn spilled_runs_merge_into_the_sorted_order() {
        let items: Vec<u64> = (0..10_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20).collect();
        let mut expected = items.clone();
        expected.sort_unstable();
        for budget in [64, 8 * 1000, 1 << 30] {
            let mut sort = SortedRuns::new(budget);
            for &i in &items {
                sort.push(Word(i)).unwrap();
            }
            let runs = sort.runs();
            assert_eq!(runs > 0, budget < 80_000, "budget {budget}: {runs} runs");
            let got: Vec<u64> = sort.finish().unwrap().map(|w| w.unwrap().0).collect();
            assert_eq!(got, expected, "budget {budget}");
        }
    }
}
