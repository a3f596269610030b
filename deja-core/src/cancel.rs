//! Stopping a read that nobody waits for any more: a [`Cancel`] token, handed to search
//! and the recall questions (in [`crate::index::search::SearchRequest`] and
//! [`crate::recall::query::Scope`]) and checked in their loops — between tiers, per
//! session grouped, per document or session read — so a call past its deadline (`deja
//! mcp`'s `--call-timeout`) or cancelled by its client returns
//! [`crate::index::IndexError::Cancelled`] within one step instead of running to the end
//! on a thread the server needs.
//!
//! A token is cheap to check (an atomic load, and a clock read when it has a deadline),
//! and the default one is never cancelled: the CLI, hooks and tests pass it and pay
//! nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The work was stopped: its token was cancelled or its deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("stopped before it finished: the call was cancelled or ran past its deadline")]
pub struct Cancelled;

/// A cancellation token shared by whoever may stop the work and the work itself.
/// Clones share one state. [`Cancel::default`] is never cancelled.
#[derive(Clone, Default)]
pub struct Cancel(Option<Arc<Inner>>);

struct Inner {
    cancelled: AtomicBool,
    deadline: Option<Instant>,
    /// Test-only (debug builds): see [`Cancel::test_only_hold`].
    #[cfg(debug_assertions)]
    hold: std::sync::Mutex<Option<std::time::Duration>>,
    /// Unit tests: checks made, and how many pass before the token cancels itself
    /// ([`Cancel::after_checks`]).
    #[cfg(test)]
    checks: std::sync::atomic::AtomicUsize,
    #[cfg(test)]
    passes: usize,
}

impl Cancel {
    /// A token that is never cancelled (the same as [`Cancel::default`]).
    pub fn never() -> Cancel {
        Cancel(None)
    }

    /// A token cancelled by [`Cancel::cancel`] or, at the latest, at `deadline`.
    pub fn with_deadline(deadline: Instant) -> Cancel {
        Cancel::build(Some(deadline))
    }

    /// A token cancelled only by [`Cancel::cancel`].
    pub fn cancellable() -> Cancel {
        Cancel::build(None)
    }

    fn build(deadline: Option<Instant>) -> Cancel {
        Cancel(Some(Arc::new(Inner {
            cancelled: AtomicBool::new(false),
            deadline,
            #[cfg(debug_assertions)]
            hold: std::sync::Mutex::new(None),
            #[cfg(test)]
            checks: std::sync::atomic::AtomicUsize::new(0),
            #[cfg(test)]
            passes: usize::MAX,
        })))
    }

    /// Unit tests: a token whose first `n` checks pass and which is cancelled from the
    /// next one on, so a test can stop a search at each of its steps in turn.
    #[cfg(test)]
    pub(crate) fn after_checks(n: usize) -> Cancel {
        let mut t = Cancel::cancellable();
        if let Some(inner) = t.0.as_mut().and_then(Arc::get_mut) {
            inner.passes = n;
        }
        t
    }

    /// Unit tests: the checks made on this token so far.
    #[cfg(test)]
    pub(crate) fn checks(&self) -> usize {
        self.0.as_ref().map_or(0, |i| i.checks.load(Ordering::SeqCst))
    }

    /// Stops the work at its next check. A token that is never cancelled stays so.
    pub fn cancel(&self) {
        if let Some(inner) = &self.0 {
            inner.cancelled.store(true, Ordering::SeqCst);
        }
    }

    /// Whether the work should stop now.
    pub fn is_cancelled(&self) -> bool {
        let Some(inner) = &self.0 else { return false };
        if inner.cancelled.load(Ordering::Relaxed) {
            return true;
        }
        // Remembered, so later checks skip the clock.
        if inner.deadline.is_some_and(|d| Instant::now() >= d) {
            inner.cancelled.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// `Err(Cancelled)` when the work should stop: the check the loops make.
    pub fn check(&self) -> Result<(), Cancelled> {
        #[cfg(debug_assertions)]
        self.hold_once();
        #[cfg(test)]
        if let Some(inner) = &self.0 {
            if inner.checks.fetch_add(1, Ordering::SeqCst) >= inner.passes {
                self.cancel();
            }
        }
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// Test-only, and only in debug builds: the first [`Cancel::check`] made on this
    /// token (the first step of a search or recall question) waits up to `d` before it
    /// answers, ending early when the token is cancelled. The end-to-end tests make a
    /// call deterministically slow inside deja-core's own loops with it, and see that a
    /// call stopped there gives its thread back (`deja mcp`'s `DEJA_TEST_ONLY_MCP_STALL`).
    #[cfg(debug_assertions)]
    pub fn test_only_hold(self, d: std::time::Duration) -> Cancel {
        if let Some(inner) = &self.0 {
            if let Ok(mut hold) = inner.hold.lock() {
                *hold = Some(d);
            }
        }
        self
    }

    #[cfg(debug_assertions)]
    fn hold_once(&self) {
        let Some(inner) = &self.0 else { return };
        let Some(d) = inner.hold.lock().ok().and_then(|mut h| h.take()) else { return };
        let until = Instant::now() + d;
        // Polled rather than signalled: a deadline passes with nobody to signal it.
        while Instant::now() < until && !self.is_cancelled() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => f.write_str("Cancel(never)"),
            Some(_) => write!(f, "Cancel(cancelled: {})", self.is_cancelled()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_token_stops_when_cancelled_or_past_its_deadline_and_clones_share_it() {
        assert!(Cancel::never().check().is_ok());
        Cancel::never().cancel();
        assert!(!Cancel::default().is_cancelled(), "the default token is never cancelled");

        let t = Cancel::cancellable();
        let seen_by_the_work = t.clone();
        assert!(seen_by_the_work.check().is_ok());
        t.cancel();
        assert_eq!(seen_by_the_work.check(), Err(Cancelled));

        assert_eq!(Cancel::with_deadline(Instant::now()).check(), Err(Cancelled));
        assert!(Cancel::with_deadline(Instant::now() + Duration::from_secs(3600)).check().is_ok());
    }

    #[test]
    fn a_test_only_hold_ends_when_the_token_is_cancelled() {
        let t = Cancel::cancellable().test_only_hold(Duration::from_secs(3600));
        let other = t.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            other.cancel();
        });
        // Returns (cancelled) rather than waiting the hour out.
        assert_eq!(t.check(), Err(Cancelled));
        canceller.join().expect("join");
        // Only the first check holds.
        let t = Cancel::cancellable().test_only_hold(Duration::from_millis(1));
        assert!(t.check().is_ok() && t.check().is_ok());
    }
}
