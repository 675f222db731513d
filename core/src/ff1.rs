//! NIST SP 800-38G FF1 (format-preserving encryption, a ten-round Feistel network whose
//! round function is AES-CBC-MAC) over AES-128, AES-192 or AES-256 from RustCrypto's
//! `aes`. Written from the specification's Algorithms 7 and 8 for numeral strings short
//! enough that each half is a number below 2^64 (radix^v ≤ 2^64) and each round's output
//! `S` is one block (d ≤ 16): every radix-2 domain up to 64 bits, and the published NIST
//! samples (radix 10 and 36). Halves are held as their values, `NUM_radix(A)` and
//! `NUM_radix(B)`, which is what FF1 computes with; [`Sealer`](crate::Sealer) splits an ID's
//! bits into them.
//!
//! Each round's AES-CBC-MAC runs over `P || Q`, where `P` depends only on the radix, the
//! length and the tweak's length, and `Q` is the tweak, zero padding, the round number and
//! `NUM_radix(B)` in `b` bytes. Everything before `Q`'s last block is the same in every
//! round and every call, so [`Ff1::new`] runs the MAC over it once and keeps the chaining
//! value: a round is then one AES block encryption, and a call ten.

use aes::cipher::consts::U16;
use aes::cipher::{BlockEncrypt, BlockSizeUser, KeyInit, generic_array::GenericArray};
use aes::{Aes128, Aes192, Aes256};

/// AES with a 128-, 192- or 256-bit key.
#[derive(Clone)]
pub(crate) enum Aes {
    A128(Aes128),
    A192(Aes192),
    A256(Aes256),
}

impl Aes {
    /// The cipher for a 16-, 24- or 32-byte key; `None` for any other length.
    pub(crate) fn new(key: &[u8]) -> Option<Aes> {
        Some(match key.len() {
            16 => Aes::A128(Aes128::new_from_slice(key).ok()?),
            24 => Aes::A192(Aes192::new_from_slice(key).ok()?),
            32 => Aes::A256(Aes256::new_from_slice(key).ok()?),
            _ => return None,
        })
    }

    /// Encrypts one block in place.
    pub(crate) fn encrypt(&self, block: &mut [u8; 16]) {
        let block = GenericArray::from_mut_slice(block);
        match self {
            Aes::A128(c) => c.encrypt_block(block),
            Aes::A192(c) => c.encrypt_block(block),
            Aes::A256(c) => c.encrypt_block(block),
        }
    }
}

/// One AES block encryption of a block held as a big-endian `u128`.
#[inline(always)]
fn encrypt_u128<C: BlockEncrypt + BlockSizeUser<BlockSize = U16>>(cipher: &C, block: u128) -> u128 {
    let mut bytes = GenericArray::from(block.to_be_bytes());
    cipher.encrypt_block(&mut bytes);
    u128::from_be_bytes(bytes.into())
}

/// FF1 under one key, for one radix, length and tweak.
#[derive(Clone)]
pub(crate) struct Ff1 {
    aes: Aes,
    /// The CBC-MAC chaining value after `P` and every block of `Q` but the last, xored
    /// with `Q`'s last block as it is before the round number and `NUM_radix(B)` go in
    /// (the tweak's tail and padding, zeros where they go): a round's AES input is this
    /// xor `[i] << 8b` xor `NUM_radix(B)`.
    base: u128,
    /// `radix^u` and `radix^v`: the halves' moduli (at most 2^64).
    pow_u: u128,
    pow_v: u128,
    /// Whether the radix is a power of two (reductions are masks).
    binary: bool,
    /// Bits of `NUM_radix(B)` in `Q` (8 times FF1's `b`), and of `R` past the `d` bytes
    /// of `S` (128 - 8d).
    b_bits: u32,
    s_shift: u32,
}

impl Ff1 {
    /// FF1 over `aes` for `n` numerals of `radix` and `tweak`; `None` outside FF1's
    /// bounds (radix 2..=2^16, n ≥ 2, radix^n ≥ 1,000,000, a tweak below 2^32 bytes) or
    /// this implementation's (radix^v ≤ 2^64).
    pub(crate) fn new(aes: Aes, radix: u32, n: u32, tweak: &[u8]) -> Option<Ff1> {
        let u = n / 2;
        let v = n - u;
        if !(2..=1 << 16).contains(&radix) || n < 2 {
            return None;
        }
        let pow = |k: u32| u128::from(radix).checked_pow(k).filter(|&p| p <= 1 << 64);
        let (pow_u, pow_v) = (pow(u)?, pow(v)?);
        if pow_u.saturating_mul(pow_v) < 1_000_000 {
            return None;
        }
        let t = u32::try_from(tweak.len()).ok()?;
        // b = ceil(ceil(v * log2(radix)) / 8): the bytes of radix^v - 1.
        let bits = 128 - (pow_v - 1).leading_zeros() as usize;
        let b = bits.div_ceil(8);
        let d = 4 * b.div_ceil(4) + 4;
        // P, then Q = T || 0^pad || [i]^1 || [NUM(B)]^b, a whole number of blocks.
        let [_, r2, r1, r0] = radix.to_be_bytes();
        let mut p = [
            1,
            2,
            1,
            r2,
            r1,
            r0,
            10,
            (u % 256) as u8,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        p[8..12].copy_from_slice(&n.to_be_bytes());
        p[12..16].copy_from_slice(&t.to_be_bytes());
        let aes_p = {
            let mut block = p;
            aes.encrypt(&mut block);
            block
        };
        let q_len = (tweak.len() + 1 + b).div_ceil(16) * 16;
        // Q's bytes before the round number: the tweak, then zeros.
        let head = |k: usize| tweak.get(k).copied().unwrap_or(0);
        let mut chain = aes_p;
        let full = q_len - 16;
        for start in (0..full).step_by(16) {
            for (k, c) in chain.iter_mut().enumerate() {
                *c ^= head(start + k);
            }
            aes.encrypt(&mut chain);
        }
        let mut last = [0u8; 16];
        for (k, l) in last.iter_mut().enumerate().take(16 - 1 - b) {
            *l = head(full + k);
        }
        Some(Ff1 {
            aes,
            base: u128::from_be_bytes(chain) ^ u128::from_be_bytes(last),
            pow_u,
            pow_v,
            binary: radix.is_power_of_two(),
            b_bits: 8 * b as u32,
            s_shift: 128 - 8 * d as u32,
        })
    }

    /// `NUM_2(S) mod radix^m` for round `i` with the half `x` (`NUM_radix` of B when
    /// encrypting, of A when decrypting) in `Q`.
    #[inline(always)]
    fn round<C: BlockEncrypt + BlockSizeUser<BlockSize = U16>>(
        &self,
        cipher: &C,
        i: u8,
        x: u64,
        pow: u128,
    ) -> u128 {
        // x < radix^v ≤ 2^(8b): it fills `Q`'s last b bytes, the round number the one before.
        let r = encrypt_u128(
            cipher,
            self.base ^ (u128::from(i) << self.b_bits) ^ u128::from(x),
        );
        // y = NUM_2(S), S = R[..d] (d ≤ 12).
        let y = r >> self.s_shift;
        if self.binary { y & (pow - 1) } else { y % pow }
    }

    /// The modulus of round `i`: `radix^u` in even rounds, `radix^v` in odd ones.
    #[inline(always)]
    fn modulus(&self, i: u8) -> u128 {
        if i % 2 == 0 { self.pow_u } else { self.pow_v }
    }

    /// Encrypts the numeral string whose halves have the values `a` (below radix^u) and
    /// `b` (below radix^v); returns the halves of the result.
    pub(crate) fn encrypt(&self, a: u64, b: u64) -> (u64, u64) {
        match &self.aes {
            Aes::A128(c) => self.encrypt_with(c, a, b),
            Aes::A192(c) => self.encrypt_with(c, a, b),
            Aes::A256(c) => self.encrypt_with(c, a, b),
        }
    }

    /// Decrypts: the inverse of [`encrypt`](Ff1::encrypt).
    pub(crate) fn decrypt(&self, a: u64, b: u64) -> (u64, u64) {
        match &self.aes {
            Aes::A128(c) => self.decrypt_with(c, a, b),
            Aes::A192(c) => self.decrypt_with(c, a, b),
            Aes::A256(c) => self.decrypt_with(c, a, b),
        }
    }

    #[inline(always)]
    fn encrypt_with<C: BlockEncrypt + BlockSizeUser<BlockSize = U16>>(
        &self,
        cipher: &C,
        mut a: u64,
        mut b: u64,
    ) -> (u64, u64) {
        for i in 0..10 {
            let pow = self.modulus(i);
            let y = self.round(cipher, i, b, pow);
            // (NUM(A) + y) mod radix^m, with A and y below radix^m.
            let mut c = u128::from(a) + y;
            if c >= pow {
                c -= pow;
            }
            a = b;
            b = c as u64;
        }
        (a, b)
    }

    #[inline(always)]
    fn decrypt_with<C: BlockEncrypt + BlockSizeUser<BlockSize = U16>>(
        &self,
        cipher: &C,
        mut a: u64,
        mut b: u64,
    ) -> (u64, u64) {
        for i in (0..10).rev() {
            let pow = self.modulus(i);
            let y = self.round(cipher, i, a, pow);
            // (NUM(B) - y) mod radix^m.
            let c = u128::from(b) + pow - y;
            let c = if c >= pow { c - pow } else { c };
            b = a;
            a = c as u64;
        }
        (a, b)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    const DIGITS: &str = "0123456789abcdefghijklmnopqrstuvwxyz";

    fn value(numerals: &str, radix: u32) -> u64 {
        numerals.chars().fold(0, |v, c| {
            v * u64::from(radix) + DIGITS.find(c).unwrap() as u64
        })
    }

    fn numerals(mut x: u64, radix: u32, len: usize) -> std::string::String {
        let mut out: Vec<u8> = (0..len)
            .map(|_| {
                let d = (x % u64::from(radix)) as usize;
                x /= u64::from(radix);
                DIGITS.as_bytes()[d]
            })
            .collect();
        out.reverse();
        std::string::String::from_utf8(out).unwrap()
    }

    /// NIST's FF1 samples 1 to 9 (FF1samples.pdf, examples for SP 800-38G), kept once
    /// for this test and the independent generator of the shared vectors.
    #[test]
    fn the_nist_samples_encrypt_and_decrypt() {
        let file: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/vectors/ff1_samples.json")).unwrap();
        let samples = file["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 9);
        for (k, sample) in samples.iter().enumerate() {
            let text = |name: &str| sample[name].as_str().unwrap();
            let (plain, cipher) = (text("plaintext"), text("ciphertext"));
            let radix = sample["radix"].as_u64().unwrap() as u32;
            let n = plain.len();
            let u = n / 2;
            let aes = Aes::new(&hex(text("key"))).unwrap();
            let ff1 = Ff1::new(aes, radix, n as u32, &hex(text("tweak"))).unwrap();
            let (a, b) = ff1.encrypt(value(&plain[..u], radix), value(&plain[u..], radix));
            let got = numerals(a, radix, u) + &numerals(b, radix, n - u);
            assert_eq!(got, cipher, "sample {}", k + 1);
            let (a, b) = ff1.decrypt(value(&cipher[..u], radix), value(&cipher[u..], radix));
            let got = numerals(a, radix, u) + &numerals(b, radix, n - u);
            assert_eq!(got, plain, "sample {} decrypted", k + 1);
        }
    }

    #[test]
    fn long_tweaks_take_more_blocks_of_q() {
        // Tweaks whose Q spans 1, 2 and 3 blocks decrypt what they encrypt, and differ.
        let aes = || Aes::new(&[0x2b; 16]).unwrap();
        let mut seen = Vec::new();
        for len in [0usize, 11, 12, 27, 28, 40] {
            let tweak: Vec<u8> = (0..len as u8).collect();
            let ff1 = Ff1::new(aes(), 2, 63, &tweak).unwrap();
            let (a, b) = ff1.encrypt(0x1234_5678 & 0x7fff_ffff, 0x9abc_def0);
            assert_eq!(ff1.decrypt(a, b), (0x1234_5678, 0x9abc_def0));
            seen.push((a, b));
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 6);
    }

    #[test]
    fn parameters_outside_the_bounds_are_refused() {
        let aes = || Aes::new(&[0; 16]).unwrap();
        assert!(Ff1::new(aes(), 1, 64, &[]).is_none());
        assert!(Ff1::new(aes(), (1 << 16) + 1, 4, &[]).is_none());
        assert!(Ff1::new(aes(), 2, 19, &[]).is_none()); // 2^19 < 1,000,000
        assert!(Ff1::new(aes(), 2, 20, &[]).is_some());
        assert!(Ff1::new(aes(), 2, 128, &[]).is_some());
        assert!(Ff1::new(aes(), 2, 129, &[]).is_none()); // a half of 65 bits
        assert!(Aes::new(&[0; 20]).is_none());
    }
}
