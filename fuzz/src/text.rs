//! A second, deliberately plain implementation of the text forms (character checks and
//! `u128` arithmetic), and the checks that hold it and the core's parsers to agreement.

use snowdrift::text::{self, Format};
use snowdrift::{ObjectId, ParseError, ParseErrorKind};

/// What docs/layouts.md and the `text` module docs promise about one form.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    pub format: Format,
    pub name: &'static str,
    /// Exact width for the fixed-width forms.
    pub width: Option<usize>,
    /// Most characters a variable-width form accepts.
    pub max: usize,
    pub radix: u128,
}

pub const DECIMAL: Form = Form {
    format: Format::Decimal,
    name: "decimal",
    width: None,
    max: 20,
    radix: 10,
};
pub const HEX: Form = Form {
    format: Format::Hex,
    name: "hex",
    width: None,
    max: 16,
    radix: 16,
};
pub const BASE32: Form = Form {
    format: Format::Base32,
    name: "base32",
    width: Some(13),
    max: 13,
    radix: 32,
};
pub const BASE62: Form = Form {
    format: Format::Base62,
    name: "base62",
    width: Some(11),
    max: 11,
    radix: 62,
};

const CROCKFORD: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

impl Form {
    /// The value of one character, or `None` outside the alphabet.
    pub fn digit(&self, c: char) -> Option<u128> {
        let d = match self.format {
            Format::Decimal => c.is_ascii_digit().then(|| c as u32 - '0' as u32),
            Format::Hex => match c {
                '0'..='9' => Some(c as u32 - '0' as u32),
                'a'..='f' => Some(c as u32 - 'a' as u32 + 10),
                'A'..='F' => Some(c as u32 - 'A' as u32 + 10),
                _ => None,
            },
            Format::Base32 => match c.to_ascii_uppercase() {
                'O' => Some(0),
                'I' | 'L' => Some(1),
                u => CROCKFORD.chars().position(|a| a == u).map(|p| p as u32),
            },
            Format::Base62 => match c {
                '0'..='9' => Some(c as u32 - '0' as u32),
                'A'..='Z' => Some(c as u32 - 'A' as u32 + 10),
                'a'..='z' => Some(c as u32 - 'a' as u32 + 36),
                _ => None,
            },
            _ => None,
        };
        d.map(u128::from)
    }

    /// The model's verdict: the value, or why the text is not one.
    pub fn model(&self, t: &str) -> Result<u64, String> {
        if t.is_empty() {
            return Err("the text is empty".into());
        }
        if let Some((i, c)) = first_invalid(self, t) {
            return Err(format!("{c:?} at byte {i} is not a {} digit", self.name));
        }
        let count = t.chars().count();
        match self.width {
            Some(w) if count != w => return Err(format!("{count} characters, not {w}")),
            None if count > self.max => {
                return Err(format!("{count} characters, more than {}", self.max));
            }
            _ => {}
        }
        match overflow_at(self, t) {
            Some(i) => Err(format!("the value passes 2^64 at character {i}")),
            None => Ok(value(self, t) as u64),
        }
    }

    /// Formats like the core should: the plain positional notation, zero-padded to the
    /// fixed width (decimal without padding), in the canonical alphabet.
    pub fn encode(&self, v: u64) -> String {
        let alphabet: Vec<char> = match self.format {
            Format::Base32 => CROCKFORD.chars().collect(),
            Format::Base62 => ('0'..='9').chain('A'..='Z').chain('a'..='z').collect(),
            _ => ('0'..='9').chain('a'..='f').collect(),
        };
        let width = match self.format {
            Format::Hex => 16,
            _ => self.width.unwrap_or(1),
        };
        let mut digits = Vec::new();
        let mut rest = u128::from(v);
        while rest > 0 || digits.len() < width {
            digits.push(alphabet[(rest % self.radix) as usize]);
            rest /= self.radix;
        }
        digits.iter().rev().collect()
    }
}

fn first_invalid(form: &Form, t: &str) -> Option<(usize, char)> {
    t.char_indices().find(|&(_, c)| form.digit(c).is_none())
}

/// The value of an all-valid text, saturating past `u128` (only ever asked of texts that
/// fit in 64 bits).
fn value(form: &Form, t: &str) -> u128 {
    t.chars().fold(0u128, |v, c| {
        v.saturating_mul(form.radix)
            .saturating_add(form.digit(c).unwrap_or(0))
    })
}

/// Where an all-valid text's value first passes `u64::MAX`: the first character of the
/// prefix that does (decimal, base62); base32 blames its first character, which holds the
/// bit that does not fit.
fn overflow_at(form: &Form, t: &str) -> Option<usize> {
    let mut v = 0u128;
    for (i, c) in t.chars().enumerate() {
        v = v * form.radix + form.digit(c)?;
        if v > u128::from(u64::MAX) {
            return Some(if matches!(form.format, Format::Base32) {
                0
            } else {
                i
            });
        }
    }
    None
}

/// Checks that an error is a true statement about the text.
fn check_error(form: &Form, t: &str, e: ParseError) {
    let count = t.chars().count();
    let first = first_invalid(form, t);
    let fail = |why: &str| -> ! {
        panic!(
            "{}: {t:?} rejected with {:?} at {} (\"{e}\"), but {why}",
            form.name,
            e.kind(),
            e.position()
        )
    };
    let n = |v: Option<usize>| v.unwrap_or_else(|| fail("a number is missing"));
    match e.kind() {
        ParseErrorKind::Empty => {
            if !t.is_empty() {
                fail("the text is not empty");
            }
        }
        ParseErrorKind::InvalidChar => {
            let found = e
                .invalid_char()
                .unwrap_or_else(|| fail("the character is missing"));
            if t.get(e.position()..).and_then(|r| r.chars().next()) != Some(found) {
                fail("that character is not at that position");
            }
            if form.digit(found).is_some() {
                fail("that character is a valid digit");
            }
            // Where the length is right, the first bad character is the one to name.
            let length_ok = form.width.is_none_or(|w| w == count);
            if length_ok && first.map(|(i, _)| i) != Some(e.position()) {
                fail(&format!("the first bad character is {first:?}"));
            }
        }
        ParseErrorKind::Overflow => {
            if let Some((i, c)) = first {
                fail(&format!(
                    "{c:?} at byte {i} is not a digit: the text is no number at all"
                ));
            }
            if form.width.is_some_and(|w| w != count) {
                fail("the length is wrong");
            }
            match overflow_at(form, t) {
                None => fail("the value fits in 64 bits"),
                Some(i) if i != e.position() => {
                    fail(&format!("the value passes 2^64 at character {i}"))
                }
                _ => {}
            }
        }
        ParseErrorKind::WrongLength => {
            let (expected, found) = (n(e.expected_len()), n(e.found_len()));
            if form.width != Some(expected) {
                fail("that is not the form's width");
            }
            if found != count || count == expected || e.position() != 0 {
                fail(&format!("the text has {count} characters"));
            }
        }
        ParseErrorKind::TooLong => {
            let max = n(e.max_len());
            if form.width.is_some() || max != form.max {
                fail(&format!("the form's limit is {}", form.max));
            }
            if count <= max {
                fail(&format!("the text has {count} characters"));
            }
        }
        _ => fail("the kind is unknown to the model"),
    }
}

/// Parses `t` with the core and with the model; they must agree, every accepted value must
/// format back and parse to itself, and every rejection must be true of the text.
pub fn check_parse(form: &Form, t: &str) {
    let got = text::parse(t, form.format);
    match (got, form.model(t)) {
        (Ok(v), Ok(w)) if v == w => {}
        (Ok(v), Ok(w)) => panic!("{}: {t:?} parsed as {v}, the model says {w}", form.name),
        (Ok(v), Err(why)) => panic!("{}: {t:?} accepted as {v}, but {why}", form.name),
        (Err(e), Ok(w)) => panic!(
            "{}: {t:?} rejected (\"{e}\"), the model reads {w}",
            form.name
        ),
        (Err(e), Err(_)) => check_error(form, t, e),
    }
    if let Ok(v) = got {
        let again = text::format(v, form.format);
        assert_eq!(
            text::parse(&again, form.format),
            Ok(v),
            "{}: {t:?} -> {v} -> {again:?} does not parse back",
            form.name
        );
    }
}

/// Format -> parse round trip of `a` and `b`, formatting against the model's encoding, and
/// order: fixed-width text sorts like the number.
pub fn check_numbers(form: &Form, a: u64, b: u64) {
    for v in [a, b] {
        let s = text::format(v, form.format);
        assert_eq!(s.as_str(), form.encode(v), "{}: format({v})", form.name);
        assert_eq!(text::parse(&s, form.format), Ok(v), "{}: {s:?}", form.name);
        // Other cases parse too where the form folds case.
        if !matches!(form.format, Format::Base62) {
            let lower = s.to_ascii_lowercase();
            let upper = s.to_ascii_uppercase();
            assert_eq!(
                text::parse(&lower, form.format),
                Ok(v),
                "{}: {lower:?}",
                form.name
            );
            assert_eq!(
                text::parse(&upper, form.format),
                Ok(v),
                "{}: {upper:?}",
                form.name
            );
        }
    }
    if !matches!(form.format, Format::Decimal) {
        let (sa, sb) = (text::format(a, form.format), text::format(b, form.format));
        assert_eq!(
            sa.as_str().cmp(sb.as_str()),
            a.cmp(&b),
            "{}: {sa:?} and {sb:?} sort unlike {a} and {b}",
            form.name
        );
    }
}

/// The whole check for one form: the input as text (lossy UTF-8, so any bytes give a
/// string), its case variants, and its first 16 bytes as two numbers.
pub fn fuzz_form(form: &Form, data: &[u8]) {
    let t = String::from_utf8_lossy(data);
    check_parse(form, &t);
    check_parse(form, &t.to_ascii_uppercase());
    check_parse(form, &t.to_ascii_lowercase());
    let (a, b) = two_numbers(data);
    check_numbers(form, a, b);
}

pub fn two_numbers(data: &[u8]) -> (u64, u64) {
    let mut bytes = [0u8; 16];
    for (to, b) in bytes.iter_mut().zip(data) {
        *to = *b;
    }
    let (a, b) = bytes.split_at(8);
    let word = |s: &[u8]| u64::from_be_bytes(s.try_into().unwrap_or([0; 8]));
    (word(a), word(b))
}

/// The model of ObjectId text: exactly 24 hex digits, either case, two per byte.
fn objectid_model(t: &str) -> Result<[u8; 12], String> {
    if t.is_empty() {
        return Err("the text is empty".into());
    }
    if let Some((i, c)) = first_invalid(&HEX, t) {
        return Err(format!("{c:?} at byte {i} is not a hex digit"));
    }
    let digits: Vec<u8> = t
        .chars()
        .filter_map(|c| HEX.digit(c))
        .map(|d| d as u8)
        .collect();
    if digits.len() != 24 {
        return Err(format!("{} characters, not 24", digits.len()));
    }
    let mut out = [0u8; 12];
    for (byte, pair) in out.iter_mut().zip(digits.chunks(2)) {
        *byte = pair[0] * 16 + pair[1];
    }
    Ok(out)
}

/// ObjectId parsing against the model, and the accessors and text of any 12 bytes.
pub fn fuzz_objectid(data: &[u8]) {
    let t = String::from_utf8_lossy(data);
    for t in [
        t.to_string(),
        t.to_ascii_uppercase(),
        t.to_ascii_lowercase(),
    ] {
        let got = ObjectId::parse(&t);
        match (got, objectid_model(&t)) {
            (Ok(o), Ok(w)) => assert_eq!(o.bytes(), w, "ObjectId {t:?}"),
            (Ok(o), Err(why)) => panic!("ObjectId {t:?} accepted as {o}, but {why}"),
            (Err(e), Ok(w)) => {
                panic!("ObjectId {t:?} rejected (\"{e}\"), the model reads {w:02x?}")
            }
            (Err(e), Err(_)) => {
                let oid = Form {
                    width: Some(24),
                    max: 24,
                    name: "ObjectId",
                    ..HEX
                };
                check_error(&oid, &t, e);
            }
        }
    }
    let mut a = [0u8; 12];
    let mut b = [0u8; 12];
    for (to, x) in a.iter_mut().chain(b.iter_mut()).zip(data) {
        *to = *x;
    }
    let (oa, ob) = (ObjectId::from_bytes(a), ObjectId::from_bytes(b));
    for (o, bytes) in [(oa, a), (ob, b)] {
        let hex: String = bytes.iter().map(|x| format!("{x:02x}")).collect();
        assert_eq!(o.to_hex().as_str(), hex);
        assert_eq!(o.to_string(), hex);
        assert_eq!(ObjectId::parse(&hex), Ok(o));
        assert_eq!(ObjectId::parse(&hex.to_ascii_uppercase()), Ok(o));
        let seconds = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let counter = u32::from_be_bytes([0, bytes[9], bytes[10], bytes[11]]);
        let process = [bytes[4], bytes[5], bytes[6], bytes[7], bytes[8]];
        assert_eq!(
            (o.timestamp(), o.process(), o.counter()),
            (seconds, process, counter)
        );
        // The counter is taken modulo 2^24: high bits must not leak into the process bytes.
        let noisy = counter | (u32::from(bytes[0]) << 24);
        assert_eq!(
            ObjectId::new(seconds, process, noisy),
            o,
            "ObjectId::new with counter {noisy:#x}"
        );
    }
    assert_eq!(
        oa.to_hex().as_str().cmp(ob.to_hex().as_str()),
        a.cmp(&b),
        "ObjectId text sorts unlike its bytes"
    );
}
