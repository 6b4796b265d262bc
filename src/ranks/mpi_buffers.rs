//! `WordBuffers`: the buffers `MpiRanks` lends MPI for a collective's elements, kept from one
//! collective to the next. The binary's block cache (`crate::alloc`) reuses a freed buffer
//! only for a request of its size class and maps a fresh one otherwise, whose pages fault on
//! first touch; exchanges change size from site to site, so one buffer as large as the largest
//! so far serves them all, written again at memory speed.
//!
//! A non-blocking call holds its buffers until it completes, so they are lent for good
//! (`'static`) and taken back ([`Loan`]) only once the request has completed: a failure that
//! leaves the call pending leaves them lent for the rest of the process.

use num_complex::Complex64;

/// Bytes per element on the wire (MPI moves `MPI_C_DOUBLE_COMPLEX` elements).
pub(super) const WORD: usize = std::mem::size_of::<Complex64>();

/// The buffers of this rank's elements and of the elements it receives.
#[derive(Default)]
pub(super) struct WordBuffers {
    send: Box<[Complex64]>,
    receive: Box<[Complex64]>,
}

impl WordBuffers {
    /// Lends the send buffer holding `bytes` as whole elements (the last padded with zeros).
    pub fn lend_send(&mut self, bytes: &[u8]) -> (&'static mut [Complex64], Loan<[Complex64]>) {
        let words = bytes.len().div_ceil(WORD);
        let mut buffer = at_least(std::mem::take(&mut self.send), words);
        let view = bytemuck::cast_slice_mut::<Complex64, u8>(&mut buffer[..words]);
        view[..bytes.len()].copy_from_slice(bytes);
        view[bytes.len()..].fill(0);
        lend_slice(buffer, words)
    }

    /// Lends the receive buffer, with room for `words` elements.
    pub fn lend_receive(&mut self, words: usize) -> (&'static mut [Complex64], Loan<[Complex64]>) {
        lend_slice(at_least(std::mem::take(&mut self.receive), words), words)
    }

    /// Keeps `send` for the next collective.
    pub fn keep_send(&mut self, send: Box<[Complex64]>) {
        self.send = send;
    }

    /// Keeps `receive` for the next collective.
    pub fn keep_receive(&mut self, receive: Box<[Complex64]>) {
        self.receive = receive;
    }
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

/// `value`, lent.
pub(super) fn lend_one<T>(value: T) -> (&'static mut T, Loan<T>) {
    let ptr = Box::into_raw(Box::new(value));
    // SAFETY: as in `lend_slice`.
    (unsafe { &mut *ptr }, Loan { ptr })
}

#[cfg(test)]
mod tests {
    use super::{lend_one, lend_vec, WordBuffers};

    #[test]
    fn a_loan_gives_back_what_was_lent_with_what_was_written_into_it() {
        let (values, loan) = lend_vec(vec![1u64, 2, 3]);
        values[1] = 5;
        // SAFETY: no MPI call used it, and `values` is not used after.
        assert_eq!(&*unsafe { loan.take_back() }, &[1, 5, 3]);
        let (value, loan) = lend_one(String::from("lent"));
        value.push('!');
        // SAFETY: as above.
        assert_eq!(*unsafe { loan.take_back() }, "lent!");
    }

    #[test]
    fn the_send_buffer_holds_the_bytes_padded_and_serves_the_next_collective() {
        let mut buffers = WordBuffers::default();
        let (elements, loan) = buffers.lend_send(&[1; 20]);
        let bytes: &[u8] = bytemuck::cast_slice(elements);
        assert_eq!(bytes.len(), 32);
        assert!(bytes[..20].iter().all(|&b| b == 1) && bytes[20..].iter().all(|&b| b == 0));
        let first = elements.as_ptr();
        // SAFETY: no MPI call used it.
        buffers.keep_send(unsafe { loan.take_back() });

        let (elements, loan) = buffers.lend_send(&[2; 3]);
        let bytes: &[u8] = bytemuck::cast_slice(elements);
        assert_eq!((elements.as_ptr(), bytes.len()), (first, 16));
        assert!(bytes[..3].iter().all(|&b| b == 2) && bytes[3..].iter().all(|&b| b == 0));
        // SAFETY: no MPI call used it.
        let kept = unsafe { loan.take_back() };
        assert_eq!(
            kept.len(),
            2,
            "the whole buffer comes back, not the part lent"
        );
        buffers.keep_send(kept);

        let (elements, _) = buffers.lend_send(&[3; 40]);
        assert_eq!(
            elements.len(),
            3,
            "a buffer too small is replaced by a larger one"
        );
    }

    #[test]
    fn the_receive_buffer_is_kept_between_collectives() {
        let mut buffers = WordBuffers::default();
        let (elements, loan) = buffers.lend_receive(4);
        elements[3].re = 7.0;
        let first = elements.as_ptr();
        // SAFETY: no MPI call used it.
        buffers.keep_receive(unsafe { loan.take_back() });
        let (elements, _) = buffers.lend_receive(2);
        assert_eq!((elements.as_ptr(), elements.len()), (first, 2));
    }
}
