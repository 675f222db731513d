//! Error messages without `core::fmt` and without allocating: each message is one
//! template, a `&'static str` in which a few control bytes stand for arguments (up to
//! four numbers and a text), rendered into a fixed buffer by one function, [`render`].
//!
//! | byte | writes |
//! |---|---|
//! | `\x01` to `\x04` | number 0 to 3, in decimal |
//! | [`TEXT`] (`\x05`) | the text, as it is |
//! | [`NESTED`] (`\x06`) | the text rendered as a template, with the same numbers |
//! | [`PRODUCT`] (`\x07`) | number 0 times number 1 (below 2^32), in decimal, exactly: the product may pass `u64::MAX` |
//! | [`BYTES`] (`\x08`) | the bytes of number 2, lowest first, up to the first zero byte (a character's UTF-8, from [`utf8`]) |
//! | [`HEX`] (`\x0b`) | number 0 in uppercase hex |
//! | [`HEX4`] (`\x0c`) | number 0 in uppercase hex, at least 4 digits |
//!
//! Every other byte is copied. A character in quotes is the template [`quoted`] gives,
//! nested, so the code that picks its escape is only linked where a message quotes one
//! (a firmware showing generator errors does not).
//!
//! `Message` lives here rather than in `error` so that `text` (which builds `ParseError`s)
//! and the message writer do not depend on each other.

use core::fmt;

/// Writes the text as it is (cut at a character boundary if it does not fit).
const TEXT: u8 = 5;
/// Renders the text as a template, with the same numbers.
const NESTED: u8 = 6;
/// Writes number 0 times number 1 in decimal.
const PRODUCT: u8 = 7;
/// Writes the bytes of number 2, lowest first, up to the first zero byte.
const BYTES: u8 = 8;
/// Writes number 0 in uppercase hex.
const HEX: u8 = 0x0b;
/// Writes number 0 in uppercase hex, at least 4 digits.
const HEX4: u8 = 0x0c;

/// An error message in a fixed buffer, built without allocating and without
/// `core::fmt` (whose machinery is most of a small wasm or firmware image that only needs
/// the text). Every error type's `message()` returns one; `Display` writes the same text.
///
/// ```
/// use snowdrift::Layout;
/// let err = Layout::builder().time_bits(41).node_bits(12).sequence_bits(12).build().unwrap_err();
/// let m = err.message();
/// assert_eq!(m.as_str(), "the fields take 65 bits (max 64)");
/// assert_eq!(&*m, m.as_str());
/// ```
#[derive(Clone, Copy)]
pub struct Message {
    buf: [u8; Message::CAPACITY],
    len: usize,
}

/// Renders `template` (see the module's table) with the numbers `args` and `text`.
#[inline(never)]
pub(crate) fn render(template: &str, args: &[u64; 4], text: &str) -> Message {
    let mut m = Message::new();
    m.write(template.as_bytes(), args, text);
    m
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
        // Only whole UTF-8 sequences are ever written: ASCII, texts cut at a character
        // boundary (see `push`), and the whole UTF-8 of a character (see `utf8`).
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// The text as UTF-8 bytes, without the check `as_str` makes: for copying the message
    /// elsewhere (a wasm buffer, a UART) in code that wants no UTF-8 validator.
    ///
    /// ```
    /// let err = snowdrift::Layout::builder().unit_ms(0).build().unwrap_err();
    /// let m = err.message();
    /// assert_eq!(m.as_bytes(), m.as_str().as_bytes());
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        // `get` rather than indexing: no panic path (len never exceeds the buffer).
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Appends `template` rendered with `args` and `text` (see the module's table).
    fn write(&mut self, template: &[u8], args: &[u64; 4], text: &str) {
        for &b in template {
            let arg = |i: usize| args.get(i).copied().unwrap_or(0);
            match b {
                TEXT => self.push(text),
                NESTED => self.write(text.as_bytes(), args, ""),
                BYTES => {
                    let mut bytes = arg(2);
                    while bytes != 0 {
                        self.byte(bytes as u8);
                        bytes >>= 8;
                    }
                }
                // One call for every number, so the digit writer is inlined nowhere.
                1..=4 | PRODUCT | HEX | HEX4 => {
                    let n = if b <= 4 {
                        arg(usize::from(b) - 1)
                    } else {
                        arg(0)
                    };
                    let times = if b == PRODUCT { arg(1) as u32 } else { 1 };
                    let radix = if b >= HEX { 16 } else { 10 };
                    let min = if b == HEX4 { 4 } else { 1 };
                    self.digits(n, times, 0, radix, min);
                }
                _ => self.byte(b),
            }
        }
    }

    /// Appends one byte if there is room.
    #[inline(never)]
    fn byte(&mut self, b: u8) {
        if let Some(to) = self.buf.get_mut(self.len) {
            *to = b;
            self.len += 1;
        }
    }

    /// Appends `s`, or as much of it as fits, cut at a character boundary.
    pub(crate) fn push(&mut self, s: &str) {
        // `len` never passes the capacity (see `byte`).
        let mut n = s.len().min(Message::CAPACITY - self.len);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        for &b in s.as_bytes().get(..n).unwrap_or(&[]) {
            self.byte(b);
        }
    }

    /// Appends `a * b + carry` in base `radix` (2 to 16, uppercase letters), at least
    /// `min` digits, exactly (it may pass `u64::MAX`) and without 128-bit arithmetic: the
    /// lowest digit of `a` times `b` plus the carry gives the lowest digit, and the rest
    /// carries over to the higher digits, written first (at most 29 calls deep: the
    /// product is below 2^96 < 10^29). `carry` must be below `b` (or 0).
    fn digits(&mut self, a: u64, b: u32, carry: u32, radix: u64, min: u32) {
        // Below radix * b, so the next carry is below `b` again.
        let t = u64::from((a % radix) as u32) * u64::from(b) + u64::from(carry);
        let (a, carry) = (a / radix, (t / radix) as u32);
        // `b == 0`: no more digits of `a * b`, only zeros.
        if (a != 0 && b != 0) || carry != 0 || min > 1 {
            self.digits(a, b, carry, radix, min.saturating_sub(1));
        }
        let d = (t % radix) as u8;
        self.byte(if d < 10 { b'0' + d } else { b'A' - 10 + d });
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

/// The template that writes `c` in single quotes, nested in a message rendered with `c` as
/// number 0 and [`utf8`]`(c)` as number 2: printable ASCII as itself (`\'` and `\\`
/// escaped), ASCII controls as Rust escapes (`'\n'`, `'\u{7F}'`), anything else as itself
/// followed by its code point (`'é' (U+00E9)`), so invisible characters still show without
/// the Unicode tables a printability check would need.
pub(crate) fn quoted(c: char) -> &'static str {
    match c {
        '\'' => "'\\''",
        '\\' => "'\\\\'",
        '\n' => "'\\n'",
        '\r' => "'\\r'",
        '\t' => "'\\t'",
        '\0' => "'\\0'",
        ' '..='~' => "'\x08'",
        '\0'..='\x7f' => "'\\u{\x0b}'",
        _ => "'\x08' (U+\x0c)",
    }
}

/// The UTF-8 bytes of `c`, the first in the lowest byte (for [`BYTES`]).
pub(crate) fn utf8(c: char) -> u64 {
    let c = u32::from(c);
    // Continuation bytes: 0 to 3.
    let more = u32::from(c > 0x7f) + u32::from(c > 0x7ff) + u32::from(c > 0xffff);
    let mut shift = 6 * more;
    // The lead byte's high bits: none for ASCII, else `more + 1` ones.
    let mut bytes = u64::from(((0xf0e0_c000u32 >> (8 * more)) | c >> shift) & 0xff);
    let mut at = 0;
    while shift > 0 {
        shift -= 6;
        at += 8;
        bytes |= u64::from(0x80 | (c >> shift) & 0x3f) << at;
    }
    bytes
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::*;
    use std::format;
    use std::string::{String, ToString};

    #[test]
    fn a_message_longer_than_its_buffer_is_cut_at_a_char_boundary() {
        let mut m = Message::new();
        for _ in 0..100 {
            m.push("é");
        }
        assert_eq!(m.as_str().len(), Message::CAPACITY);
        m.push("ab");
        assert_eq!(m.as_str().chars().count(), Message::CAPACITY / 2);
        // A text likewise: 95 of its characters fit after the "a", and the "b" after
        // them in the last byte.
        let long = "é".repeat(100);
        let m = render("a\x05b", &[0; 4], &long);
        assert_eq!(m.as_str(), format!("a{}b", "é".repeat(95)));
    }

    /// The quoted form of `c`, with `format!`: what `ParseError`'s `Display` wrote before
    /// messages were rendered from templates.
    fn quoted_by_format(c: char) -> String {
        let inner = match c {
            '\'' => r"\'".to_string(),
            '\\' => r"\\".to_string(),
            '\n' => r"\n".to_string(),
            '\r' => r"\r".to_string(),
            '\t' => r"\t".to_string(),
            '\0' => r"\0".to_string(),
            ' '..='~' => c.to_string(),
            '\0'..='\x7f' => format!("\\u{{{:X}}}", c as u32),
            _ => c.to_string(),
        };
        if c.is_ascii() {
            format!("'{inner}'")
        } else {
            format!("'{inner}' (U+{:04X})", c as u32)
        }
    }

    /// Numbers at the edges of each digit count and of u32 and u64, which the message
    /// tests here and in error.rs write.
    pub(crate) const EXTREMES: [u64; 11] = [
        0,
        1,
        9,
        10,
        37,
        99,
        100,
        4095,
        u32::MAX as u64,
        u64::MAX - 1,
        u64::MAX,
    ];

    #[test]
    fn every_placeholder_kind_writes_what_format_would() {
        // Numbers 0 to 3, in any order, at the extremes.
        for n in EXTREMES {
            let args = [n, n / 3, n / 7, u64::MAX - n];
            let m = render("<\x04|\x03|\x02|\x01|\x01>", &args, "");
            let [a, b, c, d] = args;
            assert_eq!(m.as_str(), format!("<{d}|{c}|{b}|{a}|{a}>"));
        }
        // The text, as it is: bytes that stand for arguments in a template do not in it.
        let m = render("(\x05) \x01", &[7, 0, 0, 0], "é \x01\x05\x06\x07");
        assert_eq!(m.as_str(), "(é \x01\x05\x06\x07) 7");
        // The text nested as a template, with the same numbers.
        let m = render("[\x06] \x02", &[7, 8, 0, 0], "\x01+\x02");
        assert_eq!(m.as_str(), "[7+8] 8");
        // The exact product, past u64::MAX.
        for a in [
            0,
            1,
            9,
            10,
            12345,
            u64::from(u32::MAX),
            (1 << 62) - 1,
            u64::MAX,
        ] {
            for b in [0, 1, 3, 10, 10_000, u32::MAX] {
                let m = render("=\x07.", &[a, u64::from(b), 0, 0], "");
                let product = u128::from(a) * u128::from(b);
                assert_eq!(m.as_str(), format!("={product}."), "{a} * {b}");
            }
        }
        // Hex, at least 1 or 4 digits, and a character's UTF-8 bytes.
        for c in ['\x1b', 'A', 'é', '\u{200b}', '😀', '\u{10ffff}'] {
            let args = [u64::from(c), 0, utf8(c), 0];
            let m = render("\x0b \x0c \x08", &args, "");
            assert_eq!(m.as_str(), format!("{:X} {:04X} {c}", c as u32, c as u32));
        }
    }

    #[test]
    fn every_char_is_quoted_as_format_quoted_it() {
        // Every character to U+3000, then a stride through the rest, and every
        // boundary between UTF-8 lengths.
        let chars = (0..0x3000)
            .chain((0x3000..=0x10ffff).step_by(97))
            .chain([
                0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x1_0000, 0x10_ffff,
            ])
            .filter_map(char::from_u32);
        for c in chars {
            assert_eq!(
                utf8(c).to_le_bytes()[..c.len_utf8()],
                *c.to_string().as_bytes()
            );
            assert_eq!(utf8(c) >> (8 * c.len_utf8()), 0, "nothing after the bytes");
            let m = render("\x06", &[u64::from(c), 0, utf8(c), 0], quoted(c));
            assert_eq!(m.as_str(), quoted_by_format(c), "U+{:04X}", c as u32);
        }
    }
}
