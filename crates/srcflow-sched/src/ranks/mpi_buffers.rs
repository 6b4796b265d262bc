//! `WordBuffer`: the buffer `MpiRanks` lends MPI for a collective's elements, kept from one
//! collective to the next. Every rank's part has its slot in it: this rank writes its own
//! there, sends it from there, and receives the others' into theirs. The binary's block cache
//! (`crate::alloc`) reuses a freed buffer only for a request of its size class and maps a fresh
//! one otherwise, whose pages fault on first touch; exchanges change size from site to site,
//! so one buffer as large as the largest so far serves them all, written again at memory speed.
//!
//! A non-blocking call holds its buffer until it completes, so it is lent for good
//! (`'static`) and taken back ([`Loan`]) only once the requests have completed: a failure that
//! leaves a call pending leaves it lent for the rest of the process.

use super::Payload;
use num_complex::Complex64;

/// The buffer of every rank's elements in one collective.
#[derive(Default)]
pub(super) struct WordBuffer {
    words: Box<[Complex64]>,
}

impl WordBuffer {
    /// Takes the buffer out, with room for at least `words` elements.
    pub fn take(&mut self, words: usize) -> Box<[Complex64]> {
        at_least(std::mem::take(&mut self.words), words)
    }

    /// Keeps `words` for the next collective.
    pub fn keep(&mut self, words: Box<[Complex64]>) {
        self.words = words;
    }
}

/// `slots[rank]`: `counts[rank]` elements of `buffer` after those of the ranks before.
pub(super) fn slots(
    buffer: &'static mut [Complex64],
    counts: &[usize],
) -> Vec<&'static mut [Complex64]> {
    let mut rest = buffer;
    counts
        .iter()
        .map(|&count| {
            let (slot, after) = std::mem::take(&mut rest).split_at_mut(count);
            rest = after;
            slot
        })
        .collect()
}

/// Writes `mine` into `slot` as whole elements (the last padded with zeros); the slot holds
/// exactly as many.
pub(super) fn write_payload(slot: &mut [Complex64], mine: &dyn Payload) {
    let view = bytemuck::cast_slice_mut::<Complex64, u8>(slot);
    let len = mine.byte_len();
    mine.write_to(&mut view[..len]);
    view[len..].fill(0);
}

/// `buffer`, or a new zeroed one when it has fewer than `words` elements.
fn at_least(buffer: Box<[Complex64]>, words: usize) -> Box<[Complex64]> {
    if buffer.len() >= words {
        buffer
    } else {
        bytemuck::zeroed_slice_box(words)
    }
}

/// What takes back a value lent to MPI once the call that used it has completed; dropping it
/// leaves the value lent for the rest of the process.
pub(super) struct Loan<T: ?Sized> {
    ptr: *mut T,
}

impl<T: ?Sized> Loan<T> {
    /// What was lent, back in a box.
    ///
    /// # Safety
    /// No MPI request may use it any more (the one that did has completed), nor the
    /// reference it was lent with.
    pub unsafe fn take_back(self) -> Box<T> {
        // SAFETY: the caller's contract: `ptr` is a leaked box nothing else uses.
        unsafe { Box::from_raw(self.ptr) }
    }
}

/// The first `len` elements of `buffer`, lent (all of it comes back).
pub(super) fn lend_slice<T>(buffer: Box<[T]>, len: usize) -> (&'static mut [T], Loan<[T]>) {
    let ptr = Box::into_raw(buffer);
    // SAFETY: `ptr` is a fresh box's, valid until `take_back`; the reference is derived from
    // it, so taking the box back later does not invalidate a pointer MPI was given.
    let value = unsafe { &mut (&mut *ptr)[..len] };
    (value, Loan { ptr })
}

/// `values`, lent.
pub(super) fn lend_vec<T>(values: Vec<T>) -> (&'static mut [T], Loan<[T]>) {
    let len = values.len();
    lend_slice(values.into_boxed_slice(), len)
}

#[cfg(test)]
mod tests {
    use super::{lend_slice, lend_vec, slots, write_payload, WordBuffer};
    use num_complex::Complex64;

    #[test]
    fn a_loan_gives_back_what_was_lent_with_what_was_written_into_it() {
        let (values, loan) = lend_vec(vec![1u64, 2, 3]);
        values[1] = 5;
        // SAFETY: no MPI call used it, and `values` is not used after.
        assert_eq!(&*unsafe { loan.take_back() }, &[1, 5, 3]);
    }

    #[test]
    fn the_buffer_is_kept_between_collectives_and_grows_when_too_small() {
        let mut buffer = WordBuffer::default();
        let mut words = buffer.take(4);
        words[3].re = 7.0;
        let first = words.as_ptr();
        buffer.keep(words);
        let words = buffer.take(2);
        assert_eq!(
            (words.as_ptr(), words.len()),
            (first, 4),
            "the same buffer, kept whole"
        );
        assert_eq!(words[3].re, 7.0);
        buffer.keep(words);
        let words = buffer.take(5);
        assert_eq!(
            words.len(),
            5,
            "a buffer too small is replaced by a larger one"
        );
    }

    #[test]
    fn a_part_of_a_buffer_lent_comes_back_whole() {
        let (words, loan) = lend_slice(vec![Complex64::default(); 4].into_boxed_slice(), 2);
        words[1].re = 3.0;
        assert_eq!(words.len(), 2);
        // SAFETY: no MPI call used it, and `words` is not used after.
        let back = unsafe { loan.take_back() };
        assert_eq!((back.len(), back[1].re), (4, 3.0));
    }

    #[test]
    fn each_rank_writes_its_slot_padded_to_whole_elements() {
        let (words, _) = lend_vec(vec![Complex64::default(); 5]);
        let mut parts = slots(words, &[2, 0, 3]);
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [2, 0, 3]);
        parts[2].fill(Complex64::new(1.0, 1.0));
        write_payload(parts[2], &[9u8; 20].as_slice());
        let bytes: &[u8] = bytemuck::cast_slice(&parts[2][..]);
        assert!(bytes[..20].iter().all(|&b| b == 9) && bytes[20..].iter().all(|&b| b == 0));
    }
}
