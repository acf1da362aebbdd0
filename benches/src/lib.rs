//! Shared helpers of the robotsieve benchmarks.
