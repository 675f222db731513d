//! The error message buffer and its writer: no `core::fmt`, no allocation.
//!
//! `Message` lives here rather than in `error` so that `text` (which builds `ParseError`s)
//! and the message writer do not depend on each other.

use core::fmt;

/// An error message in a fixed buffer, built without allocating and without
/// `core::fmt` (whose machinery is most of a small wasm or firmware image that only needs
/// the text). Every error type's `message()` returns one; `Display` writes the same text.
///
/// ```
/// use snowdrift::LayoutError;
/// let m = LayoutError::TooWide { total: 65 }.message();
/// assert_eq!(m.as_str(), "the fields take 65 bits (max 64)");
/// assert_eq!(&*m, m.as_str());
/// ```
#[derive(Clone, Copy)]
pub struct Message {
    buf: [u8; Message::CAPACITY],
    len: usize,
}

impl Message {
    /// The most bytes a message holds; every message of this crate fits.
    pub const CAPACITY: usize = 192;

    pub(crate) const fn new() -> Message {
        Message {
            buf: [0; Message::CAPACITY],
            len: 0,
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Only whole UTF-8 sequences are ever pushed (see `push`).
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// The text as UTF-8 bytes, without the check `as_str` makes: for copying the message
    /// elsewhere (a wasm buffer, a UART) in code that wants no UTF-8 validator.
    ///
    /// ```
    /// let m = snowdrift::LayoutError::ZeroUnit.message();
    /// assert_eq!(m.as_bytes(), m.as_str().as_bytes());
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        // `get` rather than indexing: no panic path (len never exceeds the buffer).
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Appends `s`, or as much of it as fits, cut at a character boundary.
    pub(crate) fn push(&mut self, s: &str) -> &mut Message {
        let mut n = s.len().min(Message::CAPACITY - self.len);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.push_ascii(s.as_bytes().get(..n).unwrap_or(&[]))
    }

    /// Appends ASCII bytes, or as many as fit (any cut is at a character boundary).
    fn push_ascii(&mut self, ascii: &[u8]) -> &mut Message {
        let n = ascii.len().min(Message::CAPACITY - self.len);
        if let (Some(to), Some(from)) = (self.buf.get_mut(self.len..self.len + n), ascii.get(..n)) {
            to.copy_from_slice(from);
        }
        self.len += n;
        self
    }

    /// Appends `n` in decimal.
    pub(crate) fn num(&mut self, n: u64) -> &mut Message {
        self.digits(n, 1, 0, 10, 1)
    }

    /// Appends `a * b` in decimal, exactly (it may pass `u64::MAX`).
    pub(crate) fn product(&mut self, a: u64, b: u32) -> &mut Message {
        self.digits(a, b, 0, 10, 1)
    }

    /// Appends `a * b + carry` in base `radix` (2 to 16, uppercase letters), at least
    /// `min` digits, exactly (it may pass `u64::MAX`) and without 128-bit arithmetic: the
    /// lowest digit of `a` times `b` plus the carry gives the lowest digit, and the rest
    /// carries over to the higher digits, written first (at most 29 calls deep: the
    /// product is below 2^96 < 10^29). `carry` must be below `b` (or 0).
    fn digits(&mut self, a: u64, b: u32, carry: u32, radix: u64, min: u32) -> &mut Message {
        // Below radix * b, so the next carry is below `b` again.
        let t = u64::from((a % radix) as u32) * u64::from(b) + u64::from(carry);
        let (a, carry) = (a / radix, (t / radix) as u32);
        // `b == 0`: no more digits of `a * b`, only zeros.
        if (a != 0 && b != 0) || carry != 0 || min > 1 {
            self.digits(a, b, carry, radix, min.saturating_sub(1));
        }
        let d = (t % radix) as u8;
        let digit = [if d < 10 { b'0' + d } else { b'A' - 10 + d }];
        self.push_ascii(&digit)
    }

    /// Appends `c` in single quotes: printable ASCII as itself (`\'` and `\\` escaped),
    /// ASCII controls as Rust escapes (`'\n'`, `'\u{7f}'`), anything else as itself
    /// followed by its code point (`'é' (U+00E9)`), so invisible characters still show
    /// without the Unicode tables a printability check would need.
    pub(crate) fn quoted(&mut self, c: char) -> &mut Message {
        self.push("'");
        match c {
            '\'' => self.push("\\'"),
            '\\' => self.push("\\\\"),
            '\n' => self.push("\\n"),
            '\r' => self.push("\\r"),
            '\t' => self.push("\\t"),
            '\0' => self.push("\\0"),
            ' '..='~' => self.push(c.encode_utf8(&mut [0; 4])),
            '\u{0}'..='\u{7f}' => self.push("\\u{").digits(c as u64, 1, 0, 16, 1).push("}"),
            _ => self.push(c.encode_utf8(&mut [0; 4])),
        };
        self.push("'");
        if !c.is_ascii() {
            self.push(" (U+").digits(c as u64, 1, 0, 16, 4).push(")");
        }
        self
    }
}

impl core::ops::Deref for Message {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for Message {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_longer_than_its_buffer_is_cut_at_a_char_boundary() {
        let mut m = Message::new();
        for _ in 0..100 {
            m.push("é");
        }
        assert_eq!(m.as_str().len(), Message::CAPACITY);
        m.push("ab");
        assert_eq!(m.as_str().chars().count(), Message::CAPACITY / 2);
    }
}
