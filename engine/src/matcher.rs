//! A compiled group: automaton parts combined by rank. (Being written.)
