//! [`Classifier`] for the artifact's classifiers: the pipeline's view of
//! what the engine answers. The answers themselves are the engine's; here
//! they are only handed over, with their reasons when the run asks for them.

use crate::pipeline::{Classifier, Reasons};
use robotsieve_core::Verdict;
use robotsieve_engine::{AgentClassifier, ArtifactError, MatrixClassifier, MatrixScratch, Scratch};
use std::io::Write;

impl Classifier for AgentClassifier<'_> {
    type Scratch = Scratch;
    type Error = ArtifactError;

    #[inline]
    fn classify(
        &self,
        url: &[u8],
        scratch: &mut Scratch,
        explain: Option<&mut Vec<u8>>,
    ) -> Result<Verdict, ArtifactError> {
        let answer = self.answer(url, scratch, explain.is_some())?;
        if let Some(out) = explain {
            let _ = write!(out, "{}", answer.reason);
            self.append_preferences(url, scratch, out);
        }
        Ok(answer.verdict)
    }

    fn classify_batch(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
        mut reasons: Option<&mut Reasons>,
    ) -> Result<(), ArtifactError> {
        if reasons.is_none() {
            return self.verdicts(urls, scratch, verdicts);
        }
        let answers = self.answers(urls, scratch, reasons.is_some())?;
        for ((verdict, answer), url) in verdicts.iter_mut().zip(answers).zip(urls) {
            *verdict = answer.verdict;
            if let Some(reasons) = reasons.as_mut() {
                let out = reasons.start_next();
                let _ = write!(out, "{}", answer.reason);
                self.append_preferences(url, scratch, out);
            }
        }
        Ok(())
    }

    fn classify_grouped(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
    ) -> Result<(), ArtifactError> {
        self.grouped_verdicts(urls, scratch, verdicts)
    }
}

impl Classifier for MatrixClassifier<'_> {
    type Scratch = MatrixScratch;
    type Error = ArtifactError;

    /// The first crawler's verdict; with `explain`, the row: every crawler's
    /// verdict, tab-separated.
    fn classify(
        &self,
        url: &[u8],
        scratch: &mut MatrixScratch,
        explain: Option<&mut Vec<u8>>,
    ) -> Result<Verdict, ArtifactError> {
        self.first_verdict(url, scratch, explain)
    }

    fn classify_batch(
        &self,
        urls: &[&[u8]],
        scratch: &mut MatrixScratch,
        verdicts: &mut [Verdict],
        reasons: Option<&mut Reasons>,
    ) -> Result<(), ArtifactError> {
        match reasons {
            Some(reasons) => self
                .first_verdicts(urls, scratch, verdicts, |row| MatrixClassifier::write_row(reasons.start_next(), row)),
            None => self.first_verdicts(urls, scratch, verdicts, |_| {}),
        }
    }
}
