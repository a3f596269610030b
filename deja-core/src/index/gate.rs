//! A bound on the source bytes a build holds at once, between the parsing threads and
//! the writer.
//!
//! The queue from the parsing threads to the writer counts sources, which bounds memory
//! only while sources are small. Two sessions of 150 MB parsed at once took a build to
//! 537 MB, one alone to 292 MB. A parsing thread now takes a source's size from a budget
//! before it reads the source, and the writer gives it back once it has written what the
//! source produced. A source bigger than the budget takes seven eighths of it, so two
//! such sources are never in flight at once, while small ones still go beside one and
//! keep the other core busy. On ordinary history (sources of tens of KB) the budget is
//! never reached and nothing waits. Sessions of hundreds of MB each are parsed one at a
//! time: four of 150 MB took 11.2 s and 463 MB, against 6.4 s and 900 MB unbounded.

use std::sync::{Condvar, Mutex, PoisonError};

/// Source bytes parsed or queued at once, at most (see the module doc).
pub(crate) const IN_FLIGHT_BYTES: u64 = 64 << 20;

pub(crate) struct ByteGate {
    budget: u64,
    state: Mutex<GateState>,
    changed: Condvar,
}

struct GateState {
    in_flight: u64,
    /// The writer stopped: nothing will be given back, so nobody waits any more.
    closed: bool,
}

impl ByteGate {
    pub(crate) fn new(budget: u64) -> ByteGate {
        ByteGate { budget, state: Mutex::new(GateState { in_flight: 0, closed: false }), changed: Condvar::new() }
    }

    /// What a source of `size` bytes takes from the budget: its size, at most seven
    /// eighths of the budget (see the module doc).
    fn weight(&self, size: u64) -> u64 {
        size.min(self.budget - self.budget / 8)
    }

    /// Waits until a source of `size` bytes fits beside what is in flight (or nothing
    /// is), then takes its weight. [`ByteGate::permit`] gives it back.
    pub(crate) fn acquire(&self, size: u64) {
        let weight = self.weight(size);
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while !s.closed && s.in_flight > 0 && s.in_flight + weight > self.budget {
            s = self.changed.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        s.in_flight += weight;
    }

    /// What [`ByteGate::acquire`] took for a source of `size` bytes, given back when
    /// the permit is dropped (when the writer is done with the source, whichever way).
    pub(crate) fn permit(&self, size: u64) -> Permit<'_> {
        Permit { gate: self, weight: self.weight(size) }
    }

    fn release(&self, weight: u64) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.in_flight = s.in_flight.saturating_sub(weight);
        self.changed.notify_all();
    }

    /// Lets every waiter through from now on: the writer is gone.
    pub(crate) fn close(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
        self.changed.notify_all();
    }
}

/// A source's share of the budget (see [`ByteGate::permit`]).
pub(crate) struct Permit<'a> {
    gate: &'a ByteGate,
    weight: u64,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.gate.release(self.weight);
    }
}

/// Closes the gate when dropped, however the writer's loop ends.
pub(crate) struct CloseOnDrop<'a>(pub(crate) &'a ByteGate);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn what_is_in_flight_stays_within_the_budget_and_a_big_source_goes_alone() {
        let gate = ByteGate::new(100);
        let peak = AtomicU64::new(0);
        let now = AtomicU64::new(0);
        let sizes = [30u64, 500, 60, 40, 70, 10, 100, 20, 250, 5, 300, 3];
        std::thread::scope(|s| {
            for &size in &sizes {
                let (gate, peak, now) = (&gate, &peak, &now);
                s.spawn(move || {
                    let w = gate.weight(size);
                    gate.acquire(size);
                    let held = now.fetch_add(w, Ordering::SeqCst) + w;
                    peak.fetch_max(held, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    now.fetch_sub(w, Ordering::SeqCst);
                    drop(gate.permit(size));
                });
            }
        });
        assert!(peak.load(Ordering::SeqCst) <= 100, "peak {}", peak.load(Ordering::SeqCst));
        assert_eq!(gate.weight(500), 88, "a big source leaves room for small ones, not for another big one");
        assert_eq!(gate.weight(7), 7);
    }

    #[test]
    fn a_closed_gate_lets_waiters_through() {
        let gate = ByteGate::new(10);
        gate.acquire(10);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| gate.acquire(10));
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(CloseOnDrop(&gate));
            waiter.join().expect("the waiter returns once the gate is closed");
        });
    }
}
