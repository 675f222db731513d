//! Text forms of IDs: decimal, hex, Crockford base32 and base62, formatted into a stack
//! buffer and parsed with precise errors.
//!
//! | form | width | alphabet | sorts like the number |
//! |---|---|---|---|
//! | decimal | 1 to 20 | `0-9` | no (variable width) |
//! | hex | 16 (parses 1 to 16) | `0-9a-f` (parses either case) | yes |
//! | base32 | 13 | Crockford: `0-9A-Z` without `I L O U` (parses either case, `I`/`L` as 1, `O` as 0) | yes |
//! | base62 | 11 | `0-9A-Za-z` | yes (byte order) |
//!
//! Parsing looks at the length first ([`TooLong`](crate::ParseErrorKind::TooLong) or
//! [`WrongLength`](crate::ParseErrorKind::WrongLength), each naming how many characters
//! were given; when the text holds a character outside ASCII, which is in no alphabet,
//! the first character outside the form's alphabet is reported instead, which may be an
//! ASCII one before it), then at every character
//! ([`InvalidChar`](crate::ParseErrorKind::InvalidChar) with its byte offset), and only
//! then at the value ([`Overflow`](crate::ParseErrorKind::Overflow)).
//!
//! ```
//! use snowdrift::{ParseErrorKind, text};
//! // 7 characters, not 13, but the first outside the alphabet is named: '!' at 1.
//! let err = text::parse_base32("f!>Z?Ⰻ𝅆").unwrap_err();
//! assert_eq!((err.kind(), err.invalid_char(), err.position()), (ParseErrorKind::InvalidChar, Some('!'), 1));
//! let err = text::parse_base32("fZ?Ⰻ").unwrap_err();
//! assert_eq!((err.invalid_char(), err.position()), (Some('?'), 2));
//! let err = text::parse_base32("fZⰋ").unwrap_err();
//! assert_eq!((err.invalid_char(), err.position()), (Some('Ⰻ'), 2));

//! let id = 175928847299117063;
//! assert_eq!(text::to_base32(id).as_str(), "04W86BB0G4007");
//! assert_eq!(text::parse_base32("04w86bb0g4007"), Ok(id));
//! assert_eq!(text::to_base62(id).as_str(), "0Czks0tP37X");
//! assert_eq!(text::to_hex(id).as_str(), "0271065ac1020007");
//! ```

use core::fmt;

use crate::error::{ParseError, ParseRepr};

/// A text form of an ID.
///
/// ```
/// use snowdrift::text::{self, Format};
/// let id = 175928847299117063; // Discord's documentation ID
/// assert_eq!(text::format(id, Format::Base62).as_str(), "0Czks0tP37X");
/// assert_eq!(text::parse("0271065ac1020007", Format::Hex)?, id);
/// # Ok::<(), snowdrift::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Decimal, no leading zeros.
    Decimal,
    /// 16 lowercase hex digits.
    Hex,
    /// 13 Crockford base32 characters, uppercase.
    Base32,
    /// 11 base62 characters.
    Base62,
}

impl Format {
    /// Every form, for looping over.
    ///
    /// ```
    /// use snowdrift::text::{self, Format};
    /// for form in Format::ALL {
    ///     let shown = text::format(u64::MAX, form);
    ///     assert_eq!(text::parse(&shown, form)?, u64::MAX, "{}", form.name());
    /// }
    /// # Ok::<(), snowdrift::ParseError>(())
    /// ```
    pub const ALL: [Format; 4] = [Format::Decimal, Format::Hex, Format::Base32, Format::Base62];

    /// The form's name as the frontends spell it (`"decimal"`, `"hex"`, `"base32"`,
    /// `"base62"`).
    ///
    /// ```
    /// use snowdrift::text::Format;
    /// assert_eq!(Format::Base32.name(), "base32");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Format::Decimal => "decimal",
            Format::Hex => "hex",
            Format::Base32 => "base32",
            Format::Base62 => "base62",
        }
    }
}

/// A formatted ID on the stack (at most 24 ASCII bytes); derefs to `&str`.
///
/// Two `IdText`s are equal, order and hash as their texts do (like `&str`), whatever
/// form made them.
///
/// ```
/// use snowdrift::text;
/// assert_eq!(text::to_decimal(10_000_000_000), text::to_base62(62u64.pow(10)));
/// assert!(text::to_base62(1) < text::to_hex(0x10_0000)); // "00000000001" < "0000000000100000"
/// ```
#[derive(Clone, Copy)]
pub struct IdText {
    buf: [u8; 24],
    len: u8,
}

impl IdText {
    /// The text.
    ///
    /// ```
    /// use snowdrift::text;
    /// let shown = text::to_hex(255);
    /// assert_eq!(shown.as_str(), "00000000000000ff");
    /// ```
    pub fn as_str(&self) -> &str {
        // Only ASCII from the alphabets below is ever written.
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// The text as ASCII bytes, without the check `as_str` makes (for code that wants no
    /// UTF-8 validator, such as a wasm build copying it out).
    ///
    /// ```
    /// assert_eq!(snowdrift::text::to_hex(255).as_bytes(), b"00000000000000ff");
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        // `get` rather than indexing: no panic path (len never exceeds the buffer).
        self.buf.get(..self.len as usize).unwrap_or(&[])
    }
}

// By the text alone: the buffer past `len` holds whatever the form left there.
impl PartialEq for IdText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for IdText {}

impl PartialOrd for IdText {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for IdText {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl core::hash::Hash for IdText {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl core::ops::Deref for IdText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for IdText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Debug for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
pub(crate) const HEX: &[u8; 16] = b"0123456789abcdef";
pub(crate) const INVALID: u8 = 0xff;

/// Character -> digit value, [`INVALID`] elsewhere; `fold_case` accepts both cases.
const fn table(alphabet: &[u8], fold_case: bool, crockford: bool) -> [u8; 256] {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < alphabet.len() {
        let c = alphabet[i];
        t[c as usize] = i as u8;
        if fold_case {
            t[c.to_ascii_lowercase() as usize] = i as u8;
            t[c.to_ascii_uppercase() as usize] = i as u8;
        }
        i += 1;
    }
    if crockford {
        t[b'I' as usize] = 1;
        t[b'i' as usize] = 1;
        t[b'L' as usize] = 1;
        t[b'l' as usize] = 1;
        t[b'O' as usize] = 0;
        t[b'o' as usize] = 0;
    }
    t
}

const CROCKFORD_VALUES: [u8; 256] = table(CROCKFORD, true, true);
const BASE62_VALUES: [u8; 256] = table(BASE62, false, false);
pub(crate) const HEX_VALUES: [u8; 256] = table(HEX, true, false);

/// Formats `id` in the given form.
///
/// ```
/// use snowdrift::text::{format, Format};
/// assert_eq!(format(255, Format::Hex).as_str(), "00000000000000ff");
/// assert_eq!(format(255, Format::Decimal).as_str(), "255");
/// ```
pub fn format(id: u64, form: Format) -> IdText {
    match form {
        Format::Decimal => to_decimal(id),
        Format::Hex => to_hex(id),
        Format::Base32 => to_base32(id),
        Format::Base62 => to_base62(id),
    }
}

/// Parses `text` in the given form.
///
/// ```
/// use snowdrift::text::{parse, Format};
/// assert_eq!(parse("ff", Format::Hex), Ok(255));
/// assert!(parse("", Format::Decimal).is_err());
/// ```
pub fn parse(text: &str, form: Format) -> Result<u64, ParseError> {
    match form {
        Format::Decimal => parse_decimal(text),
        Format::Hex => parse_hex(text),
        Format::Base32 => parse_base32(text),
        Format::Base62 => parse_base62(text),
    }
}

/// Decimal, no leading zeros.
///
/// ```
/// assert_eq!(snowdrift::text::to_decimal(u64::MAX).as_str(), "18446744073709551615");
/// ```
pub fn to_decimal(id: u64) -> IdText {
    let mut digits = [0u8; 20];
    let len = digits_into(&mut digits, id, 10, 1);
    let mut out = IdText {
        buf: [0; 24],
        len: len as u8,
    };
    out.buf[..20].copy_from_slice(&digits);
    out.buf[..20].rotate_left(20 - len);
    out
}

/// Writes `n` in base `radix` (2 to 16, uppercase letters), at least `min` digits,
/// right-aligned in `out`; returns how many digits. Written without indexing, so it has
/// no panic path.
fn digits_into(out: &mut [u8], mut n: u64, radix: u64, min: usize) -> usize {
    let mut len = 0;
    for to in out.iter_mut().rev() {
        if n == 0 && len >= min.max(1) {
            break;
        }
        *to = b"0123456789ABCDEF"[(n % radix) as usize & 0xf];
        n /= radix;
        len += 1;
    }
    len
}

/// 16 lowercase hex digits.
///
/// ```
/// assert_eq!(snowdrift::text::to_hex(1).as_str(), "0000000000000001");
/// ```
pub fn to_hex(id: u64) -> IdText {
    fixed::<16>(|i| HEX[((id >> (60 - 4 * i)) & 0xf) as usize])
}

/// 13 Crockford base32 characters, uppercase; fixed width, so the text sorts like the
/// number.
///
/// ```
/// assert_eq!(snowdrift::text::to_base32(u64::MAX).as_str(), "FZZZZZZZZZZZZ");
/// ```
pub fn to_base32(id: u64) -> IdText {
    // 65 bits of room: the first character holds the top 4 bits.
    fixed::<13>(|i| CROCKFORD[((id >> (60 - 5 * i)) & 0x1f) as usize])
}

/// 11 base62 characters (`0-9A-Za-z`); fixed width, so the text sorts like the number.
///
/// ```
/// assert_eq!(snowdrift::text::to_base62(61).as_str(), "0000000000z");
/// ```
pub fn to_base62(id: u64) -> IdText {
    let mut out = IdText {
        buf: [b'0'; 24],
        len: 11,
    };
    let mut rest = id;
    for i in (0..11).rev() {
        out.buf[i] = BASE62[(rest % 62) as usize];
        rest /= 62;
    }
    out
}

pub(crate) fn fixed<const N: usize>(digit: impl Fn(usize) -> u8) -> IdText {
    let mut out = IdText {
        buf: [0; 24],
        len: N as u8,
    };
    for i in 0..N {
        out.buf[i] = digit(i);
    }
    out
}

fn err(kind: ParseRepr, position: usize) -> ParseError {
    ParseError::new(kind, position)
}

pub(crate) fn invalid(text: &str, position: usize) -> ParseError {
    let found = text
        .get(position..)
        .and_then(|t| t.chars().next())
        .unwrap_or('\0');
    err(ParseRepr::InvalidChar { found }, position)
}

/// Parses 1 to 20 decimal digits (no sign, no spaces; leading zeros count towards the 20).
///
/// ```
/// use snowdrift::{text::parse_decimal, ParseErrorKind};
/// assert_eq!(parse_decimal("18446744073709551615"), Ok(u64::MAX));
/// assert_eq!(parse_decimal("18446744073709551616").unwrap_err().kind(), ParseErrorKind::Overflow);
/// assert_eq!(
///     parse_decimal("000000000000000000001").unwrap_err().kind(),
///     ParseErrorKind::TooLong
/// );
/// ```
pub fn parse_decimal(text: &str) -> Result<u64, ParseError> {
    check_max_len(text, 20, |b| b.is_ascii_digit())?;
    // At most 20 digits: only the 20th can overflow, after every other is checked.
    let mut value: u64 = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(invalid(text, i));
        }
        value = match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => v,
            None => return Err(err(ParseRepr::Overflow, i)),
        };
    }
    Ok(value)
}

/// Parses 1 to 16 hex digits, either case (no `0x`).
///
/// ```
/// assert_eq!(snowdrift::text::parse_hex("FFff"), Ok(0xffff));
/// ```
pub fn parse_hex(text: &str) -> Result<u64, ParseError> {
    check_max_len(text, 16, |b| HEX_VALUES[b as usize] != INVALID)?;
    let mut value: u64 = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        let d = HEX_VALUES[b as usize];
        if d == INVALID {
            return Err(invalid(text, i));
        }
        value = (value << 4) | u64::from(d);
    }
    Ok(value)
}

/// Parses exactly 13 Crockford base32 characters, either case, reading `I`/`L` as 1 and
/// `O` as 0.
///
/// ```
/// use snowdrift::{text::parse_base32, ParseErrorKind};
/// assert_eq!(parse_base32("0000000000001"), Ok(1));
/// assert_eq!(parse_base32("G000000000000").unwrap_err().kind(), ParseErrorKind::Overflow);
/// ```
#[inline]
pub fn parse_base32(text: &str) -> Result<u64, ParseError> {
    let Ok(bytes) = <&[u8; 13]>::try_from(text.as_bytes()) else {
        return Err(bad_length(text, 13, true, |b| {
            CROCKFORD_VALUES[b as usize] != INVALID
        }));
    };
    // No branch per character: the digits are gathered with whether any was invalid
    // (every digit is below 32, `INVALID` is not), and the exceptions looked at once.
    let mut value: u64 = 0;
    let mut seen: u8 = 0;
    for &b in bytes {
        let d = CROCKFORD_VALUES[b as usize];
        seen |= d;
        value = (value << 5) | u64::from(d);
    }
    // 13 characters hold 65 bits: the first may carry only 4.
    if seen > 0x1f || CROCKFORD_VALUES[bytes[0] as usize] > 0xf {
        return Err(bad_base32(text));
    }
    Ok(value)
}

/// Why 13 characters of the right length are not a base32 ID: the first invalid
/// character if there is one, else overflow (the first character above 15).
#[cold]
#[inline(never)]
fn bad_base32(text: &str) -> ParseError {
    match text
        .bytes()
        .position(|b| CROCKFORD_VALUES[b as usize] == INVALID)
    {
        Some(i) => invalid(text, i),
        None => err(ParseRepr::Overflow, 0),
    }
}

/// Parses exactly 11 base62 characters (`0-9A-Za-z`).
///
/// ```
/// use snowdrift::{text::parse_base62, ParseErrorKind};
/// assert_eq!(parse_base62("LygHa16AHYF"), Ok(u64::MAX));
/// assert_eq!(parse_base62("LygHa16AHYG").unwrap_err().kind(), ParseErrorKind::Overflow);
/// ```
pub fn parse_base62(text: &str) -> Result<u64, ParseError> {
    let bytes = check_len(text, 11, |b| BASE62_VALUES[b as usize] != INVALID)?;
    let mut value: u64 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let d = BASE62_VALUES[b as usize];
        if d == INVALID {
            return Err(invalid(text, i));
        }
        value = match value
            .checked_mul(62)
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => v,
            None => return Err(err(ParseRepr::Overflow, i)),
        };
    }
    Ok(value)
}

/// Checks a variable-width form is 1 to `max` bytes long.
fn check_max_len(text: &str, max: usize, digit: fn(u8) -> bool) -> Result<(), ParseError> {
    if text.is_empty() || text.len() > max {
        return Err(bad_length(text, max, false, digit));
    }
    Ok(())
}

/// Checks a fixed-width form is `n` bytes long.
pub(crate) fn check_len(text: &str, n: usize, digit: fn(u8) -> bool) -> Result<&[u8], ParseError> {
    if text.len() != n {
        return Err(bad_length(text, n, true, digit));
    }
    Ok(text.as_bytes())
}

/// The error for a text whose length is not allowed: empty; with a character outside every
/// alphabet (non-ASCII, so more than one byte), the first character not in this form's
/// (`digit`), which may come before it; else a length error: `limit` is the width
/// of a `fixed` form, or a variable one's most characters. Every character is ASCII when
/// the length is named, so `found` counts characters.
#[cold]
#[inline(never)]
fn bad_length(text: &str, limit: usize, fixed: bool, digit: fn(u8) -> bool) -> ParseError {
    if text.is_empty() {
        return err(ParseRepr::Empty, 0);
    }
    if !text.is_ascii() {
        // A non-ASCII character's first byte is not a digit either: some byte qualifies,
        // and it starts a character.
        let position = text.bytes().position(|b| !digit(b)).unwrap_or(0);
        return invalid(text, position);
    }
    let found = text.len();
    if fixed {
        err(
            ParseRepr::WrongLength {
                expected: limit,
                found,
            },
            0,
        )
    } else {
        err(ParseRepr::TooLong { found, max: limit }, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_round_trips_the_edges() {
        for id in [
            0,
            1,
            31,
            32,
            61,
            62,
            1 << 32,
            (1 << 63) - 1,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ] {
            for form in Format::ALL {
                assert_eq!(parse(&format(id, form), form), Ok(id), "{id} as {form:?}");
            }
        }
    }

    #[test]
    fn fixed_width_forms_sort_like_the_number() {
        let ids = [
            0u64,
            1,
            61,
            62,
            63,
            1 << 40,
            (1 << 40) + 1,
            u64::MAX / 3,
            u64::MAX,
        ];
        for form in [Format::Hex, Format::Base32, Format::Base62] {
            for w in ids.windows(2) {
                assert!(
                    format(w[0], form).as_str() < format(w[1], form).as_str(),
                    "{form:?}"
                );
            }
        }
    }

    #[test]
    fn errors_point_at_the_offending_character() {
        let e = parse_base62("00000000-00").unwrap_err();
        assert_eq!(e, err(ParseRepr::InvalidChar { found: '-' }, 8));
        let e = parse_base32("0000000000U00").unwrap_err();
        assert_eq!(e, err(ParseRepr::InvalidChar { found: 'U' }, 10));
        let e = parse_hex("12345678123456781").unwrap_err();
        assert_eq!(e, err(ParseRepr::TooLong { found: 17, max: 16 }, 16));
        let e = parse_decimal("99999999999999999999").unwrap_err();
        assert_eq!(e, err(ParseRepr::Overflow, 19));
        let e = parse_decimal("-1").unwrap_err();
        assert_eq!(e, err(ParseRepr::InvalidChar { found: '-' }, 0));
        assert_eq!(parse_base32("").unwrap_err(), err(ParseRepr::Empty, 0));
        let e = parse_base32("é00000000000").unwrap_err(); // 13 bytes, 12 characters
        assert_eq!(e.invalid_char(), Some('é'));
        let e = parse_base32("0000000000é00").unwrap_err(); // 14 bytes, 13 characters
        assert_eq!(e, err(ParseRepr::InvalidChar { found: 'é' }, 10));
        assert_eq!(
            e.message().as_str(),
            "invalid character 'é' (U+00E9) at position 10"
        );
    }

    #[test]
    fn decimal_takes_at_most_20_characters_even_of_leading_zeros() {
        assert_eq!(parse_decimal("00000000000000000001"), Ok(1));
        assert_eq!(parse_decimal("00000000000000000000"), Ok(0));
        let e = parse_decimal("000000000000000000001").unwrap_err();
        assert_eq!(e.position(), 20);
        assert_eq!(e.message().as_str(), "too long: 21 characters (max 20)");
        let zeros = [b'0'; 1000];
        let zeros = core::str::from_utf8(&zeros).unwrap();
        let e = parse_decimal(zeros).unwrap_err();
        assert_eq!(e.message().as_str(), "too long: 1000 characters (max 20)");
    }

    #[test]
    fn every_parser_names_how_many_characters_it_was_given() {
        extern crate std;
        let zeros = [b'0'; 1000];
        type Parser = fn(&str) -> Result<(), ParseError>;
        let parsers: [(Parser, usize); 4] = [
            (|t| parse_decimal(t).map(drop), 20),
            (|t| parse_hex(t).map(drop), 16),
            (|t| parse_base32(t).map(drop), 13),
            (|t| parse_base62(t).map(drop), 11),
        ];
        #[cfg(feature = "objectid")]
        let parsers: [(Parser, usize); 5] = [
            parsers[0],
            parsers[1],
            parsers[2],
            parsers[3],
            (|t| crate::ObjectId::parse(t).map(drop), 24),
        ];
        let parsers: &[(Parser, usize)] = &parsers;
        for &(parse, width) in parsers {
            for found in [width + 1, 1000] {
                let text = core::str::from_utf8(&zeros[..found]).unwrap();
                let message = parse(text).unwrap_err().message();
                assert!(
                    message.contains(&std::format!("{found} characters"))
                        && message.contains(&std::format!(" {width})")),
                    "{found} characters: {message}"
                );
            }
        }
        let e = parse_hex("12345678123456781").unwrap_err();
        assert_eq!(e.message().as_str(), "too long: 17 characters (max 16)");
    }

    #[test]
    fn base32_reports_an_invalid_character_before_overflow() {
        let cases = [
            ("G000000000U00", ParseRepr::InvalidChar { found: 'U' }, 10),
            ("Z00000000000!", ParseRepr::InvalidChar { found: '!' }, 12),
            ("G000000000000", ParseRepr::Overflow, 0),
        ];
        for (text, kind, position) in cases {
            assert_eq!(parse_base32(text), Err(err(kind, position)), "{text}");
        }
    }

    #[test]
    fn id_texts_compare_and_hash_by_their_text_alone() {
        extern crate std;
        use core::hash::BuildHasher;
        let hasher =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        let hash = |t: &IdText| hasher.hash_one(t);
        // "10000000000" from two forms: the decimal buffer is zero-filled past the text,
        // the base62 one holds '0's there.
        let decimal = to_decimal(10_000_000_000);
        let base62 = to_base62(62u64.pow(10));
        assert_eq!(
            (decimal.as_str(), base62.as_str()),
            ("10000000000", "10000000000")
        );
        assert_eq!(decimal, base62);
        assert_eq!(decimal.cmp(&base62), core::cmp::Ordering::Equal);
        assert_eq!(hash(&decimal), hash(&base62));
        // A text sorts before a longer text it begins, whatever lies past its end.
        let short = to_base62(1); // "00000000001", '0's past the end
        let long = to_hex(0x10_0000); // "0000000000100000", zeros past the end
        assert!(long.as_str().starts_with(short.as_str()));
        assert!(short < long);
        assert_eq!(short.partial_cmp(&long), Some(core::cmp::Ordering::Less));
        let mut texts = [
            long,
            base62,
            short,
            decimal,
            to_decimal(9),
            to_hex(u64::MAX),
        ];
        texts.sort();
        let mut strs = texts.map(|t| std::string::String::from(t.as_str()));
        strs.sort();
        assert_eq!(texts.map(|t| std::string::String::from(t.as_str())), strs);
    }

    #[test]
    fn crockford_reads_lookalike_letters() {
        assert_eq!(parse_base32("OOOOOOOOOOOOL"), Ok(1));
        assert_eq!(parse_base32("oooooooooooOi"), Ok(1));
    }
}
